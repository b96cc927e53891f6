package prebuild

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/devbulk/devbulk/kbuild"
	"github.com/devbulk/devbulk/tests/history"
)

// The planted commit of the source tests' history builds with devbulk's
// config, and a second build of it is the cache's: nothing rebuilt. (The
// skips are the source tests' own: where they would not build, this does
// not either.)
func TestPlantedKernelBuildsOnce(t *testing.T) {
	switch {
	case testing.Short():
		t.Skip("-short runs the unit tests only")
	case os.Geteuid() != 0:
		t.Skip("integration tests need root (CAP_NET_ADMIN) to make network namespaces")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 not installed (apt-get install qemu-system-x86): the VM suite cannot run")
	}
	if why := history.Unavailable(); why != "" {
		t.Skip(why)
	}
	dir, err := history.Make()
	if err != nil {
		t.Fatal(err)
	}
	s, err := kbuild.Parse("src:" + dir + "@planted")
	if err != nil {
		t.Fatal(err)
	}
	first, err := kbuild.Build(context.Background(), s, kbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s (cached %v, %s)", first.Image, first.Cached, first.Took)
	again, err := kbuild.Build(context.Background(), s, kbuild.Options{})
	if err != nil || !again.Cached || again.Image != first.Image {
		t.Fatalf("a second build: %+v, %v; want the first's image, from the cache", again, err)
	}
}
