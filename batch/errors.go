package batch

import "errors"

// ErrConflict reports a request that clashes with what the namespace
// already holds (a name in use, a missing parent). Nothing was created.
var ErrConflict = errors.New("conflict")

// ErrSurvivors reports devices still present after a delete phase.
var ErrSurvivors = errors.New("devices still present after delete")

// ErrNotApplicable reports a strategy that does not apply to a kind or a
// namespace (a usage error: exit code 2).
var ErrNotApplicable = errors.New("strategy does not apply")
