package atm

// Queued returns the PDUs the adapter holds whose last cell has not left
// yet: with the host's own queue, whether a sender has finished sending.
func (a *Adapter) Queued() int { return a.inFlight }
