package vm

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Each form of --kernels reaches its source: a file's lines, a directory's
// builds in name order, and a Debian range (refused here as two equal
// ends, before apt is asked); what names nothing matches ErrBadSpec.
func TestKernelList(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list")
	os.WriteFile(list, []byte("debian:6.1 # good\n\ndebian:6.12 rcu_nocbs=all\n"), 0o600)
	builds := filepath.Join(dir, "builds")
	for _, b := range []string{"b", "a"} {
		os.MkdirAll(filepath.Join(builds, b, "lib", "modules", "6.1.0"), 0o755)
		os.WriteFile(filepath.Join(builds, b, "bzImage"), nil, 0o600)
	}
	if got, err := KernelList(list); err != nil || !slices.Equal(got, []string{"debian:6.1", "debian:6.12 rcu_nocbs=all"}) {
		t.Errorf("file: %q, %v", got, err)
	}
	got, err := KernelList(builds)
	if err != nil || len(got) != 2 || !strings.HasSuffix(got[0], "a/bzImage:"+filepath.Join(builds, "a", "lib", "modules", "6.1.0")) {
		t.Errorf("builds: %q, %v", got, err)
	}
	for arg, want := range map[string]string{
		"debian:6.1.0-47..debian:6.1.0-47": "are the same kernel",
		filepath.Join(dir, "nope"):         "no such file",
	} {
		if _, err := KernelList(arg); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}
