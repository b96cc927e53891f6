package netnsbench

import (
	"sync"
	"testing"
	"time"
)

// Nearest-rank percentiles: of 1..100 ms, p50 is 50 ms and p99 99 ms; of
// one value, every figure is that value; nothing noted is nil.
func TestSetupLatency(t *testing.T) {
	var s setupTimes
	var wg sync.WaitGroup
	for w := range 4 { // from several workers, as a churn's
		wg.Go(func() {
			for i := w + 1; i <= 100; i += 4 {
				s.add(time.Duration(101-i) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	ms := int64(time.Millisecond)
	if got, want := *s.latency(), (Latency{Count: 100, P50NS: 50 * ms, P99NS: 99 * ms, MaxNS: 100 * ms}); got != want {
		t.Errorf("1..100 ms: %+v, want %+v", got, want)
	}
	var one setupTimes
	one.add(7)
	if got := *one.latency(); got != (Latency{Count: 1, P50NS: 7, P99NS: 7, MaxNS: 7}) {
		t.Errorf("one value: %+v", got)
	}
	if (&setupTimes{}).latency() != nil {
		t.Error("nothing noted, a latency")
	}
}
