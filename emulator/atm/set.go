package atm

// Config returns the link direction's settings.
func (l *CellLink) Config() LinkConfig { return l.cfg }

// SetConfig changes the link direction's cell delay, jitter, cell loss
// ratio and queue limit at the model's current time (atmlab set); its PHY,
// propagation, seed and stepping stay. Nothing queued or in flight is lost
// or reordered: a cell's slot, its loss and its arrival are drawn when it is
// queued (stepping cell by cell, when it leaves), so the change applies to
// the cells queued (leaving) after it, as on a line whose length or quality
// changed at that moment, and a cell that a shorter delay would deliver
// before one still in flight arrives just behind it instead. A lower queue
// limit drops nothing already queued; it refuses cells while the queue is
// above it.
func (l *CellLink) SetConfig(cfg LinkConfig) {
	cfg.PHY, cfg.Propagation, cfg.Seed, cfg.PerCell = l.cfg.PHY, l.cfg.Propagation, l.cfg.Seed, l.cfg.PerCell
	l.cfg = cfg
}
