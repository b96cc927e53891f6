package charts

import (
	"os"
	"testing"
)

// Whatever document plot is given, it builds the chart or says why not: no
// panic, no endless loop (an N=1 chart once looped forever). Rendering (texts
// as glyph outlines) is left to the unit tests: too slow to fuzz.
func FuzzFromDocument(f *testing.F) {
	for _, name := range []string{"bench.json", "netns.json", "check.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"tool":"devbulk","kind":"ifb","runs":[{"count":1,"create":{"wall_ns":-1}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := FromDocument(b)
		if err == nil && p == nil {
			t.Fatal("no chart and no error")
		}
	})
}
