package devices

import "testing"

// FreeVNIs skips every range that holds a VNI in use, and starts where the
// seed says, so that two runs of one namespace get different VNIs.
func TestFreeVNIs(t *testing.T) {
	used := map[uint32]bool{}
	for v := uint32(1); v <= 100; v++ {
		used[v] = true
	}
	used[150] = true
	for _, c := range []struct {
		count int
		seed  uint32
		want  uint32
	}{
		{10, 0, 101},   // past 1..100
		{60, 0, 151},   // 101..160 holds 150
		{10, 200, 201}, // the seed's start is free
		{10, 145, 151}, // 146..155 holds 150
	} {
		got, err := FreeVNIs(c.count, c.seed, used)
		if err != nil || got != c.want {
			t.Errorf("FreeVNIs(%d, %d) = %d, %v; want %d", c.count, c.seed, got, err, c.want)
		}
	}
	// The last range ends at the last VNI; past it, the search wraps
	// around to the first free range.
	if got, err := FreeVNIs(10, maxVNI-10, used); err != nil || got != maxVNI-9 {
		t.Errorf("at the top: %d, %v; want %d", got, err, maxVNI-9)
	}
	used[maxVNI] = true
	if got, err := FreeVNIs(10, maxVNI-10, used); err != nil || got != 101 {
		t.Errorf("wrapped: %d, %v; want 101", got, err)
	}
	if _, err := FreeVNIs(maxVNI, 0, used); err == nil {
		t.Error("a range as large as every VNI was found free beside VNIs in use")
	}
	if _, err := (Vxlan).Plan(Options{Count: 10, Prefix: "v", VNIBase: maxVNI - 5}); err == nil {
		t.Error("a plan past the last VNI was accepted")
	}
}
