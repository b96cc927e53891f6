package vm

import (
	"os/exec"
	"strings"
	"testing"
)

func TestNumberBetween(t *testing.T) {
	for _, c := range []struct {
		a, b, prefix, suffix string
		an, bn               int
	}{
		{"linux-image-6.1.0-47-cloud-amd64", "linux-image-6.1.0-57-cloud-amd64", "linux-image-6.1.0-", "-cloud-amd64", 47, 57},
		{"linux-image-6.12.117+deb12-cloud-amd64", "linux-image-6.12.118+deb12-cloud-amd64", "linux-image-6.12.", "+deb12-cloud-amd64", 117, 118},
		{"linux-image-6.1.0-9-cloud-amd64", "linux-image-6.1.0-10-cloud-amd64", "linux-image-6.1.0-", "-cloud-amd64", 9, 10},
	} {
		p, s, an, bn, err := numberBetween(c.a, c.b)
		if err != nil || p != c.prefix || s != c.suffix || an != c.an || bn != c.bn {
			t.Errorf("%s, %s: %q %q %d %d %v", c.a, c.b, p, s, an, bn, err)
		}
	}
	for _, c := range [][2]string{
		{"linux-image-6.1.0-47-cloud-amd64", "linux-image-6.1.0-57-rt-amd64"},
		{"linux-image-6.1.0-47-cloud-amd64", "linux-image-6.12.117+deb12-cloud-amd64"},
		{"debian", "linux-image-6.1.0-57-cloud-amd64"},
	} {
		if _, _, _, _, err := numberBetween(c[0], c[1]); err == nil {
			t.Errorf("%s and %s taken for one series", c[0], c[1])
		}
	}
}

// Debian's eleven 6.1 point releases, from apt's lists (when this machine
// has them: the tests' run-all.sh runs apt-get update).
func TestDebianRange(t *testing.T) {
	if _, err := exec.LookPath("apt-cache"); err != nil {
		t.Skip("no apt-cache")
	}
	pkgs, err := DebianRange("debian:6.1.0-47", "debian:6.1.0-57")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 11 || pkgs[0] != "linux-image-6.1.0-47-cloud-amd64" || pkgs[10] != "linux-image-6.1.0-57-cloud-amd64" {
		t.Errorf("range: %v", pkgs)
	}
	for _, c := range [][2]string{{"debian:6.1.0-57", "debian:6.1.0-47"}, {"debian:6.1.0-47", "debian:6.1.0-47"}, {"debian:6.1.0-47", "debian:6.1.0-99"}} {
		if _, err := DebianRange(c[0], c[1]); err == nil || !strings.Contains(err.Error(), "--good") && !strings.Contains(err.Error(), "apt's lists do not hold") {
			t.Errorf("range %v: %v", c, err)
		}
	}
}
