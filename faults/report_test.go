package faults

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/kernlog"
)

// The table counts each path's faults by the kernel's words, says where
// the sweep ended, and spells out every failed step.
func TestReportTable(t *testing.T) {
	r := &Report{Kind: "dummy", Count: 3, MaxN: 2000, Steps: []Step{
		{Path: Create, N: 1, Injected: true, Error: "3 links not created, first errors: dbf0: cannot allocate memory"},
		{Path: Create, N: 2, Injected: true, Error: "3 links not created, first errors: dbf1: cannot allocate memory"},
		{Path: Create, N: 3, Injected: true, Devbulk: "1 devices left (dbf2…) and no record of them"},
		{Path: Create, N: 4},
		{Path: Delete, N: 1, Injected: true, Findings: []kernlog.Finding{{Phase: "delete with fail-nth 1", Class: "warning", Text: []string{"WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 f"}}}},
	}}
	if n := r.Failed(); n != 2 {
		t.Errorf("%d failed steps, want 2", n)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	for _, want := range []string{
		"create: 3 faults injected, ran whole at N=4; 1 steps failed\n",
		"      2× cannot allocate memory\n",
		"      1× no error: the kernel took the fault in its stride\n",
		"delete: 1 faults injected, stopped at N=1: more fault points than --max-n; 1 steps failed\n",
		"create N=3 (error \"\"):\n  devbulk: 1 devices left (dbf2…) and no record of them\n",
		"  warning during delete with fail-nth 1:\n    WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 f\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
