package vm

import (
	"context"
	"strings"

	"github.com/devbulk/devbulk/kbuild"
)

// A range of commits of one source tree, src:TREE@GOOD..src:TREE@BAD
// (bisect's --good and --bad) or src:TREE@GOOD..BAD: good, then every
// commit on bad's first-parent line after it (kbuild.Range), each built
// when its step boots it.
var srcList = &listSource{form: "src:TREE@GOOD..src:TREE@BAD (or src:TREE@GOOD..BAD), the commits between, each built from source",
	accepts: func(arg string) bool { return kbuild.IsSource(arg) && strings.Contains(arg, "..") },
	list: func(arg string) ([]string, error) {
		good, bad, err := kbuild.ParseRange(arg)
		if err == nil {
			var list []string
			if list, err = kbuild.Range(context.Background(), good, bad); err == nil {
				return list, nil
			}
		}
		return nil, badSpec{err}
	},
}
