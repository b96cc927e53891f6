package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

const events = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: this kernel cannot create vlan\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: qemu-system-x86_64 not installed\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestC","Elapsed":1.5}
{"Action":"pass","Package":"p","Test":"TestC/sub","Elapsed":9}
{"Action":"fail","Package":"x/q","Test":"TestD","Elapsed":12.25}
{"Action":"output","Package":"q","Test":"TestVM","Output":"    vm_test.go:101: in the VM: 48 passed, 0 skipped, 0 failed\n"}
{"Action":"output","Package":"q","Test":"TestVM2","Output":"    vm_test.go:101: in the VM: 2 passed, 1 skipped, 1 failed\n"}
`

func TestUnexpectedSkipFails(t *testing.T) {
	allowed := []*regexp.Regexp{regexp.MustCompile(`cannot create (dummy|vlan)$`)}
	var out bytes.Buffer
	err := run(strings.NewReader(events), allowed, &out)
	if err == nil || !strings.Contains(err.Error(), "TestB") || strings.Contains(err.Error(), "TestA") {
		t.Errorf("err = %v, want TestB's skip (only) refused", err)
	}
	// ran counts pass and fail, subtests too; skip is separate.
	for _, row := range []string{"p    2       2        2       0", "x/q    1       0        0       1", "all    3       2        2       1", "(VM guests) 51 50 1 1"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(row), " ")) {
			t.Errorf("summary lacks %q:\n%s", row, out.String())
		}
	}
	if !strings.Contains(out.String(), "the 2 slowest tests:\n    12.2 s  q.TestD\n     1.5 s  p.TestC\n") {
		t.Errorf("summary lacks the slowest tests, top-level only, slowest first:\n%s", out.String())
	}
	allowed = append(allowed, regexp.MustCompile(`not installed`))
	if err := run(strings.NewReader(events), allowed, &out); err != nil {
		t.Errorf("every skip expected: %v", err)
	}
	if err := run(strings.NewReader(""), allowed, &out); err == nil {
		t.Error("no test ran, and summary passed")
	}
}
