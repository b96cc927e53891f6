package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/netnsbench"
)

// Churn and sequential runs count what they made, see the kernel's drain
// end, and leave no namespace behind (the run fails when the slab count is
// not back after the drain).
func TestNetnsScenarios(t *testing.T) {
	needKind(t, "ifb")
	for _, args := range [][]string{
		{"netns", "churn", "--workers", "2", "--per-worker", "50", "--json"},
		{"netns", "churn", "--workers", "1", "--per-worker", "20", "--payload", "devices:ifb:3", "--json"},
		{"netns", "churn", "--workers", "2", "--per-worker", "10", "--payload", "veth", "--json"},
		{"netns", "churn", "--workers", "1", "--per-worker", "10", "--payload", "exec:ip link set lo up", "--json"},
		{"netns", "sequential", "--count", "50", "--json"},
	} {
		r := run(t, t.TempDir(), args...)
		if r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			continue
		}
		var rep netnsbench.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		run := rep.Runs[0]
		if run.Namespaces != run.Workers*run.PerWorker || run.NetnsPerSec <= 0 || run.DrainMethod == "" || len(run.Series) == 0 {
			t.Errorf("%v: run %+v", args, run)
		}
	}
}

func TestNetnsBadInput(t *testing.T) {
	needRoot(t)
	for args, want := range map[string]string{
		"netns churn --workers 0":                      "--workers \"0\" out of range: 1..1024",
		"netns churn --payload wormhole":               "unknown payload",
		"netns churn --payload devices:vlan:3":         "not payloads",
		"netns churn --payload devices:ifb:0":          "COUNT out of range: 1..10000",
		"netns churn --workers 1000 --per-worker 1000": "namespaces out of range",
		"netns churn --compare shell":                  "the only comparison is exec",
		"netns sequential --count 0":                   "--count \"0\" out of range",
	} {
		r := run(t, t.TempDir(), strings.Fields(args)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", args, r.code, r.stderr, want)
		}
	}
}
