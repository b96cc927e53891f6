package kernlog

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// records turns the lines of a report as the kernel printed it into
// /dev/kmsg records, 1 ms apart from usec on, of facility fac.
func records(t *testing.T, path string, fac int, usec int64) []record {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []record
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		raw := fmt.Sprintf("%d,%d,%d,-;%s\n SUBSYSTEM=net\n", fac<<3|3, i, usec+int64(i)*1000, strings.ReplaceAll(line, "\t", `\x09`))
		r, ok := parseRecord([]byte(raw))
		if !ok {
			t.Fatalf("%s:%d not a record: %q", path, i+1, raw)
		}
		rs = append(rs, r)
	}
	return rs
}

func group(phase string, batches ...[]record) []Finding {
	var g grouper
	for _, rs := range batches {
		for _, r := range rs {
			g.add(r, phase)
		}
	}
	g.close()
	return g.done
}

// A hung task's report (as 6.1 printed it in devbulk's VM: a getlink
// blocked on RTNL behind a group delete) is one finding, whole, and the
// lines around it are not in it.
func TestHungTaskIsOneFinding(t *testing.T) {
	before := []record{{kernel: true, usec: 1, text: "IPv6: ADDRCONF(NETDEV_CHANGE): dbk0: link becomes ready"}}
	report := records(t, "testdata/hung-task.txt", 0, 2_000_000)
	after := []record{{kernel: true, usec: 2_030_000, text: "ifb: module loaded"}}
	fs := group("N=10 rep 1 delete group", before, report, after)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Class != "hung task" || f.Phase != "N=10 rep 1 delete group" || len(f.Text) != len(report) || f.Text[len(f.Text)-1] != " </TASK>" {
		t.Errorf("finding %s during %s, %d lines (want %d), ending %q", f.Class, f.Phase, len(f.Text), len(report), f.Text[len(f.Text)-1])
	}
	if !strings.Contains(strings.Join(f.Text, "\n"), "__mutex_lock") {
		t.Error("the call trace is not in the finding")
	}
}

// A WARN is one finding from its WARNING line to its end trace, without
// the register dump; "Modules linked in" is cut.
func TestWarnKeepsWhatAMaintainerReads(t *testing.T) {
	fs := group("p", records(t, "testdata/warn.txt", 0, 0))
	if len(fs) != 1 || fs[0].Class != "warning" {
		t.Fatalf("findings %+v, want one warning", fs)
	}
	text := strings.Join(fs[0].Text, "\n")
	if !strings.HasPrefix(fs[0].Title(), "WARNING: CPU: 1 PID: 2345 at net/core/dev.c:10871") || !strings.HasSuffix(text, "---[ end trace 0000000000000000 ]---") {
		t.Errorf("text:\n%s", text)
	}
	for _, gone := range []string{"RAX:", "R13:", "Code:", "CR2:", "Hardware name:", "virtio_blk"} {
		if strings.Contains(text, gone) {
			t.Errorf("%q kept:\n%s", gone, text)
		}
	}
	if !strings.Contains(text, "rtnl_dellink+0x1a3/0x3a0") {
		t.Errorf("call trace lost:\n%s", text)
	}
}

// A process that writes a complaint's words to /dev/kmsg is not the
// kernel: no finding. A report whose next line comes late ends there.
func TestOnlyTheKernelComplains(t *testing.T) {
	if fs := group("p", records(t, "testdata/warn.txt", 1, 0)); len(fs) != 0 {
		t.Errorf("a process's record made findings: %+v", fs)
	}
	rs := records(t, "testdata/hung-task.txt", 0, 0)
	rs[3].usec = rs[2].usec + 2*maxGapUsec
	if fs := group("p", rs); len(fs) != 1 || len(fs[0].Text) != 3 {
		t.Errorf("a report cut by a gap: %+v", fs)
	}
}

func TestParseRecord(t *testing.T) {
	r, ok := parseRecord([]byte("4,1234,5678,-;a\\x09tab\n SUBSYSTEM=net\n DEVICE=n2\n"))
	if !ok || !r.kernel || r.usec != 5678 || r.text != "a\ttab" {
		t.Errorf("%+v %v", r, ok)
	}
	for _, bad := range []string{"", "no semicolon", "x,1,2,-;t", "6,1;t"} {
		if _, ok := parseRecord([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The noise list takes the findings whose first line matches, and says
// how many; a bad pattern is named by its line.
func TestNoise(t *testing.T) {
	n, err := ParseNoise(strings.NewReader("# hung tasks are the test's own\n\n^INFO: task \\S+ blocked\n"), "list")
	if err != nil || len(n) != 1 {
		t.Fatalf("%v %v", n, err)
	}
	w := &Watcher{noise: n}
	for _, r := range append(records(t, "testdata/hung-task.txt", 0, 0), records(t, "testdata/warn.txt", 0, 1e9)...) {
		w.g.add(r, "p")
	}
	s := w.summary()
	if s.Filtered != 1 || len(s.Findings) != 1 || s.Findings[0].Class != "warning" {
		t.Errorf("summary %+v", s)
	}
	if _, err := ParseNoise(strings.NewReader("ok\n(\n"), "list"); err == nil || !strings.HasPrefix(err.Error(), "list:2: ") {
		t.Errorf("bad pattern: %v", err)
	}
	if def, err := ReadNoise(""); err != nil || len(def) != 0 {
		t.Errorf("devbulk's list: %v %v", def, err)
	}
}

func TestSummarySays(t *testing.T) {
	for _, c := range []struct {
		s    *Summary
		want string
	}{
		{&Summary{Records: 12, Findings: []Finding{}}, "kernel log: 12 records read, no complaint\n"},
		{&Summary{Unread: "/dev/kmsg: permission denied"}, "kernel log: not read (/dev/kmsg: permission denied): the kernel's complaints are not known\n"},
		{&Summary{Records: 3, Filtered: 1, Findings: []Finding{{Phase: "p", Class: "warning", Text: []string{"WARNING: x", " f+0x1/0x2"}}}},
			"kernel log: 3 records read, 1 complaints (findings); 1 filtered by the noise list:\n  warning during p:\n    WARNING: x\n     f+0x1/0x2\n"},
	} {
		var b bytes.Buffer
		c.s.Write(&b)
		if b.String() != c.want {
			t.Errorf("got %q, want %q", b.String(), c.want)
		}
	}
}

// A fault injected on purpose is its own class, and its site is the trace
// below the allocator: where the failed allocation was asked for.
func TestInjectedFaultSite(t *testing.T) {
	fs := group("p", records(t, "testdata/fault.txt", 0, 0))
	if len(fs) != 1 || fs[0].Class != InjectedFault {
		t.Fatalf("findings %+v", fs)
	}
	if got, want := fs[0].Site(3), "netdev_name_node_alloc ← register_netdevice ← dummy_newlink"; got != want {
		t.Errorf("site %q, want %q", got, want)
	}
	if got := (Finding{Text: []string{"WARNING: x"}}).Site(3); got != "" {
		t.Errorf("a report without a trace has site %q", got)
	}
}

// What Stop costs the command that ends a watch, the reader already
// waiting in its poll (a poll timeout there once made every Stop wait up
// to 100 ms: the scripted create's and delete's largest cost).
func BenchmarkStop(b *testing.B) {
	if s := Watch(nil).Stop(); s.Unread != "" {
		b.Skip(s.Unread)
	}
	for range b.N {
		b.StopTimer()
		w := Watch(nil)
		time.Sleep(time.Millisecond) // the reader reaches its poll
		b.StartTimer()
		w.Stop()
	}
}
