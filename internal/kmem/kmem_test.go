package kmem

import (
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	c, ok := parse([]byte("MemTotal: 100 kB\nMemAvailable:     900 kB\nSReclaimable:  20 kB\nSUnreclaim: 30 kB\nVmallocUsed: 5 kB\nPercpu: 7 kB\n"))
	if !ok || c != (Counters{20, 30, 7, 5, 900, 0, false}) || c.Kernel() != 62 || c.Devices() != 62 {
		t.Errorf("%+v %v", c, ok)
	}
	if _, ok := parse([]byte("MemAvailable: 1 kB\n")); ok {
		t.Error("a meminfo without the slab counters reads as complete")
	}
	if d := (Counters{30, 40, 8, 6, 800, 500, true}).Sub(Counters{20, 30, 7, 5, 900, 400, true}); d != (Counters{10, 10, 1, 1, -100, 100, true}) || d.Devices() != 102 {
		t.Errorf("Sub: %+v", d)
	}
	if d := (Counters{30, 40, 8, 6, 800, 500, true}).Sub(Counters{20, 30, 7, 5, 900, 0, false}); d.Objects || d.Devices() != 22 {
		t.Errorf("Sub with one side's objects unknown: %+v, devices %d", d, d.Devices())
	}
}

func TestParseSlabinfo(t *testing.T) {
	kib, ok := parseSlabinfo([]byte("slabinfo - version: 2.1\n" +
		"# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n" +
		"kmalloc-4k          1024   1040   4096    8    8 : tunables    0    0    0 : slabdata    130    130      0\n" +
		"skbuff_head_cache    512    600    256   32    2 : tunables    0    0    0 : slabdata     18     18      0\n"))
	if !ok || kib != 4096+128 {
		t.Errorf("slabinfo: %d KiB, %v; want 4224", kib, ok)
	}
	for _, bad := range []string{"", "slabinfo - version: 1.1\n", "slabinfo - version: 2.1\nx y z w\n"} {
		if _, ok := parseSlabinfo([]byte(bad)); ok {
			t.Errorf("%q read as slabinfo", bad)
		}
	}
}

func TestRead(t *testing.T) {
	c, ok := Read()
	if !ok || c.MemAvailable <= 0 {
		t.Errorf("%+v %v", c, ok)
	}
	if os.Geteuid() == 0 && (!c.Objects || c.SlabObjects <= 0) {
		t.Errorf("as root, slabinfo's objects: %+v", c)
	}
}
