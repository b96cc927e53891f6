package registry

import "testing"

// Names come by rank, a tie by name; a name registered twice panics.
func TestRegistry(t *testing.T) {
	r := New[string, int]("thing", func(v int) int { return v })
	r.Add("c", 1)
	r.Add("b", 2)
	r.Add("a", 2)
	if got := r.List(); got != "c, a, b" {
		t.Errorf("list %q, want \"c, a, b\"", got)
	}
	if v, ok := r.Get("b"); !ok || v != 2 {
		t.Errorf("get b: %d, %v", v, ok)
	}
	if _, ok := r.Get("z"); ok {
		t.Error("get z: found")
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration did not panic")
		}
	}()
	r.Add("a", 3)
}
