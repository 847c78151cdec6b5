package ring

import "testing"

// A ring keeps FIFO order across wrap-around and growth, At counts from
// the head, and Pop clears the slot it empties.
func TestRing(t *testing.T) {
	var r Ring[*int]
	next, want := 0, 0
	for round := range 5 {
		for range 10 + 7*round { // grows past 16, then 32, while wrapped
			v := next
			r.Push(&v)
			next++
		}
		if got := *r.At(r.Len() - 1); *got != next-1 {
			t.Fatalf("At(Len-1) = %d, want %d", *got, next-1)
		}
		for range 8 {
			head := r.head
			if got := *r.Pop(); got != want {
				t.Fatalf("Pop = %d, want %d", got, want)
			}
			if r.buf[head] != nil {
				t.Fatalf("Pop left its slot holding %d", *r.buf[head])
			}
			want++
		}
	}
	if r.Len() != next-want || **r.Peek() != want {
		t.Fatalf("Len %d head %d, want %d and %d", r.Len(), **r.Peek(), next-want, want)
	}
}
