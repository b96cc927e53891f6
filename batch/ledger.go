package batch

// Ledger is where a run's ownership is written down (package runs keeps
// it in records): a device devbulk made is in the ledger until it is
// gone. CreateIn and Delete tell it what happens at the moments the
// guarantees need; nil (NoLedger) records nothing.
type Ledger interface {
	// Taken reports whether group g is already a recorded run's: a new
	// run never takes it.
	Taken(g uint32) bool
	// Keep saves the set's ownership: before the first device is created
	// (complete false, no ifindexes yet) and once every device is created
	// and recorded (complete true).
	Keep(s *Set, complete bool) error
	// Marked saves the set's groups (s.Marks) before a group delete moves
	// the devices to a new one, so that no interruption leaves devices
	// under a group nobody knows; nothing else of the record changes.
	Marked(s *Set) error
	// Deleting is told once before a delete's first request that changes
	// devices: by the group strategy right before the look that answers
	// its checks, by the others after the checks. Its error stops the
	// delete; Delete may still refuse after it (Outcome.Acted then says that
	// nothing was sent).
	Deleting() error
	// Forget drops the ownership: a failed create's undo removed every
	// device it made.
	Forget() error
}

// NoLedger records nothing. Embed it to implement part of Ledger.
type NoLedger struct{}

func (NoLedger) Taken(uint32) bool     { return false }
func (NoLedger) Keep(*Set, bool) error { return nil }
func (NoLedger) Marked(*Set) error     { return nil }
func (NoLedger) Deleting() error       { return nil }
func (NoLedger) Forget() error         { return nil }

// ledgerOr is l, or NoLedger when l is nil.
func ledgerOr(l Ledger) Ledger {
	if l == nil {
		return NoLedger{}
	}
	return l
}

// undoing is a create's ledger while its undo deletes: the record stays
// "creating" (a killed undo is finished by cleanup either way).
type undoing struct{ Ledger }

func (undoing) Deleting() error { return nil }
