package bystander

import (
	"fmt"
	"slices"
	"time"

	"github.com/devbulk/devbulk/internal/result"
)

// Stats are a bystander's operations during a window of time (a phase,
// or its idle baseline): latencies count from when each was due.
type Stats struct {
	Op   string  `json:"op"`
	Rate float64 `json:"rate_per_s"`
	Ops  int     `json:"ops"`
	P50  int64   `json:"p50_ns"`
	P99  int64   `json:"p99_ns"`
	Max  int64   `json:"max_ns"`
	// LongestStall is the longest time one operation waited for its
	// answer (sent to answered), and StallBegan when it was sent, after
	// the window's start (negative: sent before the phase began, and kept
	// waiting into it).
	LongestStall int64 `json:"longest_stall_ns"`
	StallBegan   int64 `json:"stall_began_ns"`
	// Interrupted counts the dumps the kernel flagged NLM_F_DUMP_INTR (and
	// the prober retried).
	Interrupted int `json:"dumps_interrupted,omitempty"`
	// From and To are the window, since the prober's first operation was
	// due (the time axis of Trace).
	From       int64  `json:"from_ns"`
	To         int64  `json:"to_ns"`
	Errors     int    `json:"errors,omitempty"`
	FirstError string `json:"first_error,omitempty"`
}

func summarise(cfg Config, from time.Time, in []sample) Stats {
	st := Stats{Op: cfg.Op, Rate: cfg.Rate, Ops: len(in)}
	if len(in) == 0 {
		return st
	}
	lat := make([]int64, 0, len(in))
	for _, s := range in {
		lat = append(lat, s.done.Sub(s.due).Nanoseconds())
		if svc := s.done.Sub(s.sent).Nanoseconds(); svc > st.LongestStall {
			st.LongestStall, st.StallBegan = svc, s.sent.Sub(from).Nanoseconds()
		}
		st.Interrupted += s.interrupted
		if s.err != nil {
			if st.Errors++; st.FirstError == "" {
				st.FirstError = s.err.Error()
			}
		}
	}
	slices.Sort(lat)
	st.P50, st.P99, st.Max = rank(lat, 50), rank(lat, 99), lat[len(lat)-1]
	return st
}

// rank is the nearest-rank percentile of sorted values.
func rank(sorted []int64, pct int) int64 {
	i := (pct*len(sorted) + 99) / 100
	return sorted[max(0, i-1)]
}

// Line says in one line what a bystander waited during what (a create, the
// move), against its idle baseline.
func Line(idle, during *Stats, what string) string {
	f := result.FormatNS
	return fmt.Sprintf("bystander %s/s in a namespace of its own, during %s: %d operations, p50 %s, p99 %s, max %s, longest stall %s (idle: p50 %s, p99 %s, max %s)",
		Config{Op: idle.Op, Rate: idle.Rate}, what, during.Ops, f(during.P50), f(during.P99), f(during.Max), f(during.LongestStall),
		f(idle.P50), f(idle.P99), f(idle.Max))
}
