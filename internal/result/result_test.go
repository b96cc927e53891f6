package result

import (
	"runtime"
	"testing"
)

// Three significant digits in the unit that keeps the number under 1000:
// no exponent ever ("1e+03ms" was printed for 999.7 ms).
func TestFormatNS(t *testing.T) {
	for ns, want := range map[int64]string{
		0:                 "0µs",
		1500:              "1.5µs",
		303:               "0.303µs",
		999_700_000:       "1s",
		999_400_000:       "999ms",
		12_345_678:        "12.3ms",
		1_500_000_000:     "1.5s",
		123_456_000_00:    "12.3s",
		4_000_000_000_000: "4000s",
	} {
		if got := FormatNS(ns); got != want {
			t.Errorf("FormatNS(%d) = %q, want %q", ns, got, want)
		}
	}
}

// The collector's account grows with a collection, and its time never
// runs backwards.
func TestGC(t *testing.T) {
	n1, t1 := GC()
	runtime.GC()
	n2, t2 := GC()
	if n2 <= n1 || t2 < t1 || t2 < 0 {
		t.Errorf("before a collection %d, %d ns; after %d, %d ns", n1, t1, n2, t2)
	}
}
