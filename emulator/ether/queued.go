package ether

// Queued returns the frames waiting for the medium or on it.
func (st *Station) Queued() int { return st.queue.Len() }
