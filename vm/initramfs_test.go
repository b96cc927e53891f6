package vm

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cavaliergopher/cpio"
)

// The archive the kernel unpacks: every directory before what it holds, /init
// executable, the arguments, the modules asked for with their dependencies,
// and a modules.dep for them.
func TestInitramfsLayout(t *testing.T) {
	// The guest needs both; tests/run-all.sh installs them, and a skip for
	// any other reason fails CI (tests/expected-skips).
	for _, tool := range []string{"busybox", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install busybox-static iproute2): the guest's tools cannot be checked", tool)
		}
	}
	mods := filepath.Join(t.TempDir(), "6.1.0-test")
	for _, f := range []string{"kernel/net/8021q/8021q.ko", "kernel/net/802/garp.ko", "kernel/net/llc/llc.ko", "kernel/drivers/net/other.ko"} {
		os.MkdirAll(filepath.Join(mods, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(mods, f), []byte("module"), 0o644)
	}
	dep := "kernel/net/8021q/8021q.ko: kernel/net/802/garp.ko kernel/net/llc/llc.ko\nkernel/net/802/garp.ko: kernel/net/llc/llc.ko\nkernel/net/llc/llc.ko:\nkernel/drivers/net/other.ko:\n"
	os.WriteFile(filepath.Join(mods, "modules.dep"), []byte(dep), 0o644)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := Initramfs{Devbulk: self, Args: []string{"bench", "--kind", "vlan"},
		Kernel: &Kernel{Modules: mods, Release: "6.1.0-test"}, Modules: []string{"8021q", "builtin_one"},
		Files: map[string][]byte{"/suite.json": []byte(`{"name":"s"}`)}}
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	cr := cpio.NewReader(zr)
	seen := map[string]*cpio.Header{}
	contents := map[string]string{}
	for {
		h, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[h.Name] != nil {
			t.Errorf("%s twice in the archive", h.Name)
		}
		if dir := filepath.Dir(h.Name); dir != "." && (seen[dir] == nil || !seen[dir].Mode.IsDir()) {
			t.Errorf("%s comes before its directory %s", h.Name, dir)
		}
		seen[h.Name] = h
		b, _ := io.ReadAll(cr)
		contents[h.Name] = string(b)
	}
	if h := seen["init"]; h == nil || h.Mode.Perm()&0o100 == 0 {
		t.Error("no executable /init")
	}
	if contents["suite.json"] != `{"name":"s"}` {
		t.Errorf("extra file: %q", contents["suite.json"])
	}
	for _, applet := range []string{"bin/sh", "bin/unshare"} {
		if h := seen[applet]; h == nil || h.Linkname != "busybox" {
			t.Errorf("%s is not busybox", applet)
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(contents["devbulk.args"]), &args); err != nil || strings.Join(args, " ") != "bench --kind vlan" {
		t.Errorf("devbulk.args %q: %v", contents["devbulk.args"], err)
	}
	base := "lib/modules/6.1.0-test/"
	for _, f := range []string{"kernel/net/8021q/8021q.ko", "kernel/net/802/garp.ko", "kernel/net/llc/llc.ko"} {
		if seen[base+f] == nil {
			t.Errorf("%s missing", f)
		}
	}
	if seen[base+"kernel/drivers/net/other.ko"] != nil {
		t.Error("a module nobody asked for was included")
	}
	if !strings.Contains(contents[base+"modules.dep"], "kernel/net/8021q/8021q.ko: kernel/net/802/garp.ko kernel/net/llc/llc.ko") {
		t.Errorf("modules.dep:\n%s", contents[base+"modules.dep"])
	}
	if seen["usr/sbin/ip"] == nil {
		t.Error("iproute2's ip missing")
	}
}
