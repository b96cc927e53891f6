package vm

import (
	"errors"
	"testing"
)

// apt-cache depends of a meta package names the image it stands for; of an
// image, only what it needs (and a Conflicts line naming another image).
func TestImageOf(t *testing.T) {
	for _, tc := range []struct{ pkg, out, want string }{
		{"linux-image-6.12-cloud-amd64", "linux-image-6.12-cloud-amd64\n  Depends: linux-image-6.12.118+deb12-cloud-amd64\n", "linux-image-6.12.118+deb12-cloud-amd64"},
		{"linux-image-rt-amd64", "linux-image-rt-amd64\n  Depends: linux-image-6.1.0-57-rt-amd64\n", "linux-image-6.1.0-57-rt-amd64"},
		{"linux-image-6.1.0-47-cloud-amd64", `linux-image-6.1.0-47-cloud-amd64
  Depends: kmod
  Depends: linux-base
 |Depends: initramfs-tools
  Depends: <linux-initramfs-tool>
    dracut
    initramfs-tools
    tiny-initramfs
  Conflicts: linux-image-6.1.0-47-cloud-amd64-unsigned
  Breaks: fwupdate
  Replaces: linux-image-6.1.0-47-cloud-amd64-unsigned
`, "linux-image-6.1.0-47-cloud-amd64"},
	} {
		if got := imageOf(tc.pkg, tc.out); got != tc.want {
			t.Errorf("imageOf(%s) = %s, want %s", tc.pkg, got, tc.want)
		}
	}
}

// Names that are no Debian kernel are refused before apt is asked, as
// usage errors; paths that are no image too.
func TestFindRefusesWhatNamesNothing(t *testing.T) {
	for _, spec := range []string{"debian:7", "debian:6.1-lts", "debianx", "linux-image-../../etc", "", "/nonexistent/bzImage", "/nonexistent/bzImage:/tmp rcu_nocbs=all"} {
		if _, err := Find(spec, t.TempDir()); !errors.Is(err, ErrBadSpec) {
			t.Errorf("Find(%q): %v, want ErrBadSpec", spec, err)
		}
	}
}

// A configuration's command line: devbulk vm's own parameters, then what
// the configuration adds, last (so that it can override them).
func TestCmdline(t *testing.T) {
	k := &Kernel{Name: "debian:6.1", Package: "linux-image-6.1.0-57-cloud-amd64", Vmlinuz: "/c/vmlinuz", Append: "rcu_nocbs=all preempt=full"}
	got := cmdline(Config{Kernel: k, Accel: "tcg", Progress: true})
	want := "console=ttyS0 panic=-1 quiet devbulk.accel=tcg devbulk.package=linux-image-6.1.0-57-cloud-amd64 devbulk.progress=1 rcu_nocbs=all preempt=full"
	if got != want {
		t.Errorf("cmdline\n got %s\nwant %s", got, want)
	}
	if k.Label() != "debian:6.1 rcu_nocbs=all preempt=full" || k.Describe() != "debian:6.1 = linux-image-6.1.0-57-cloud-amd64 (/c/vmlinuz) booted with rcu_nocbs=all preempt=full" {
		t.Errorf("label %q, description %q", k.Label(), k.Describe())
	}
}
