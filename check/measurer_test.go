package check

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/kbuild"
	"github.com/devbulk/devbulk/vm"
)

// A kernel that does not build, or on which a patch or revert does not
// apply, is a bisection's skip (bisect.ErrNoBoot, git's 125); any other
// failure to find a kernel is this machine's (apt, disk), and stops it.
func TestMeasurerSkipsWhatDoesNotBuild(t *testing.T) {
	for _, c := range []struct {
		err  error
		skip bool
	}{
		{fmt.Errorf("%w: make failed", kbuild.ErrBuild), true},
		{fmt.Errorf("%w: the patch does not apply", kbuild.ErrStep), true},
		{errors.New("apt-get download: no space left on device"), false},
	} {
		m := Measurer{Kernel: func(context.Context, string) (*vm.Kernel, error) { return nil, c.err }}
		_, err := m.Measure(context.Background(), "src:tree@abc", 0)
		if err == nil || errors.Is(err, bisect.ErrNoBoot) != c.skip {
			t.Errorf("kernel error %q: %v; want a skip %v", c.err, err, c.skip)
		}
	}
}
