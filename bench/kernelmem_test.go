package bench

import (
	"strings"
	"testing"
)

// A figure per device only where it is stable (issue 40, item 5): growth
// past the method's least, and ten times the noise measured just before.
func TestKernelMemJudge(t *testing.T) {
	for _, c := range []struct {
		m   KernelMem
		n   int
		per float64
		why string
	}{
		{KernelMem{Method: MethodObjects, DevicesKiB: 4100, NoiseKiB: 16}, 100, 41, ""},
		{KernelMem{Method: MethodObjects, DevicesKiB: 410, NoiseKiB: 0}, 10, 0, "the 10 devices grew 410 KiB, under the 2 MiB"},
		{KernelMem{Method: MethodMeminfo, DevicesKiB: 4100, NoiseKiB: 0}, 100, 0, "under the 32 MiB"},
		{KernelMem{Method: MethodMeminfo, DevicesKiB: 41000, NoiseKiB: 0}, 1000, 41, ""},
		{KernelMem{Method: MethodObjects, DevicesKiB: 41000, NoiseKiB: 4200}, 1000, 0, "the counters moved 4200 KiB in 20ms with nothing created"},
		{KernelMem{Method: MethodObjects, DevicesKiB: -42000, NoiseKiB: 0}, 1000, 0, "the counters fell 42000 KiB while 1000 devices were made"},
	} {
		c.m.judge(c.n)
		if c.m.PerDeviceKiB != c.per || !strings.Contains(c.m.Withheld, c.why) || (c.why == "") != (c.m.Withheld == "") {
			t.Errorf("%+v for %d: %.1f KiB, withheld %q; want %.1f, %q", c.m, c.n, c.m.PerDeviceKiB, c.m.Withheld, c.per, c.why)
		}
	}
}
