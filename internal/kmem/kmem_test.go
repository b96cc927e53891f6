package kmem

import "testing"

func TestParse(t *testing.T) {
	c, ok := parse([]byte("MemTotal: 100 kB\nMemAvailable:     900 kB\nSReclaimable:  20 kB\nSUnreclaim: 30 kB\nVmallocUsed: 5 kB\nPercpu: 7 kB\n"))
	if !ok || c != (Counters{20, 30, 7, 5, 900}) || c.Kernel() != 62 {
		t.Errorf("%+v %v", c, ok)
	}
	if _, ok := parse([]byte("MemAvailable: 1 kB\n")); ok {
		t.Error("a meminfo without the slab counters reads as complete")
	}
	if d := (Counters{30, 40, 8, 6, 800}).Sub(Counters{20, 30, 7, 5, 900}); d != (Counters{10, 10, 1, 1, -100}) {
		t.Errorf("Sub: %+v", d)
	}
}

// This machine's /proc/meminfo has every counter.
func TestRead(t *testing.T) {
	if c, ok := Read(); !ok || c.MemAvailable <= 0 {
		t.Errorf("%+v %v", c, ok)
	}
}
