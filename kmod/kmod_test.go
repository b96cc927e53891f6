package kmod

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIndexOrdersDependenciesFirst(t *testing.T) {
	dir := t.TempDir()
	dep := "kernel/drivers/net/dummy.ko:\n" +
		"kernel/net/8021q/8021q.ko: kernel/net/802/mrp.ko kernel/net/802/garp.ko kernel/net/802/stp.ko kernel/net/llc/llc.ko\n" +
		"kernel/net/ipv4/ip_gre.ko.xz: kernel/net/ipv4/gre.ko.xz kernel/net/ipv4/ip_tunnel.ko.xz\n" +
		"kernel/drivers/net/ip6-foo.ko:\n"
	if err := os.WriteFile(filepath.Join(dir, "modules.dep"), []byte(dep), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"dummy":   {"kernel/drivers/net/dummy.ko"},
		"8021q":   {"kernel/net/llc/llc.ko", "kernel/net/802/stp.ko", "kernel/net/802/garp.ko", "kernel/net/802/mrp.ko", "kernel/net/8021q/8021q.ko"},
		"ip_gre":  {"kernel/net/ipv4/ip_tunnel.ko.xz", "kernel/net/ipv4/gre.ko.xz", "kernel/net/ipv4/ip_gre.ko.xz"},
		"ip6_foo": {"kernel/drivers/net/ip6-foo.ko"},
	}
	for name, want := range cases {
		got, err := ix.Files(name)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := ix.Files("nosuch"); err == nil {
		t.Error("a missing module was found")
	}
}
