package check

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// What ParseSuite accepts is a suite that runs: every scenario names a
// known kind or netns scenario with counts in range, and it reads back the
// same after encoding.
func FuzzParseSuite(f *testing.F) {
	f.Add(FullSuite())
	f.Add([]byte(`{"name":"s","scenarios":[{"name":"a","bench":{"kind":"ifb","count":10,"delete":["group"]}}]}`))
	f.Add([]byte(`{"name":"s","scenarios":[{"name":"a","netns":{"scenario":"churn","workers":2,"per_worker":3}}]} x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSuite(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, sc := range s.Scenarios {
			if (sc.Bench == nil) == (sc.Netns == nil) || sc.Name == "" {
				t.Fatalf("accepted scenario %+v", sc)
			}
			if sc.Bench != nil {
				if _, err := sc.Bench.options(); err != nil {
					t.Fatalf("accepted a bench that does not build: %+v: %v", sc.Bench, err)
				}
			}
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseSuite(bytes.NewReader(again)); err != nil {
			t.Fatalf("accepted suite does not read back: %v\n%s", err, again)
		}
	})
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"25%", "0", "1000%", "nan", "-1%", " 10 %", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseThreshold(s)
		if err == nil && (math.IsNaN(v) || v < 0 || v > 1000) {
			t.Fatalf("ParseThreshold(%q) = %v", s, v)
		}
	})
}
