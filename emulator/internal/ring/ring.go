// Package ring is the growable FIFO the models queue frames, cells and
// their times in: it reuses its storage, so steady traffic allocates
// nothing, and it lets go of what it pops.
package ring

// Ring is a growable FIFO that reuses its storage. The zero value is empty.
// Its storage is a power of two long, so an index wraps with a mask, not
// a division: a channel pushes and pops its queue once a frame.
type Ring[T any] struct {
	buf     []T
	head, n int
}

// Len returns the number of elements queued.
func (r *Ring[T]) Len() int { return r.n }

// Push appends v.
func (r *Ring[T]) Push(v T) {
	if r.n == len(r.buf) {
		nb := make([]T, max(16, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = *r.At(i)
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// Peek returns the head; the ring must not be empty.
func (r *Ring[T]) Peek() *T { return &r.buf[r.head] }

// At returns the i-th element from the head.
func (r *Ring[T]) At(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// Pop removes and returns the head, clearing its slot so that what it
// held (a frame) can be collected; the ring must not be empty.
func (r *Ring[T]) Pop() T {
	v := r.buf[r.head]
	var zero T
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}
