package netnsbench

import (
	"slices"
	"sync"
	"time"
)

// Latency is how long one namespace took to set up (unshare, and the
// payload), over the namespaces of a run: a pod waits for its own setup,
// not for the average, so the tail is reported beside the median.
type Latency struct {
	Count int   `json:"count"`
	P50NS int64 `json:"p50_ns"`
	P99NS int64 `json:"p99_ns"`
	MaxNS int64 `json:"max_ns"`
}

// setupTimes collects the namespaces' setup times from a run's workers
// (8 bytes each: a million namespaces hold 8 MB).
type setupTimes struct {
	mu sync.Mutex
	ns []int64
}

// add notes one namespace's setup time; safe from several goroutines.
func (s *setupTimes) add(d time.Duration) {
	s.mu.Lock()
	s.ns = append(s.ns, d.Nanoseconds())
	s.mu.Unlock()
}

// latency is the distribution noted so far (nearest-rank percentiles), or
// nil when nothing was.
func (s *setupTimes) latency() *Latency {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ns) == 0 {
		return nil
	}
	sorted := slices.Clone(s.ns)
	slices.Sort(sorted)
	rank := func(percent int) int64 { return sorted[(percent*len(sorted)+99)/100-1] } // the ceil(q n)-th
	return &Latency{Count: len(sorted), P50NS: rank(50), P99NS: rank(99), MaxNS: sorted[len(sorted)-1]}
}
