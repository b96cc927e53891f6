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
func init() {
	registerList(&listSource{order: 0, form: "src:TREE@GOOD..src:TREE@BAD (or src:TREE@GOOD..BAD), the commits between, each built from source",
		accepts: func(arg string) bool { return kbuild.IsSource(arg) && strings.Contains(arg, "..") },
		list: func(arg string) ([]string, error) {
			goodArg, badArg, ok := strings.Cut(arg, ".."+kbuild.Prefix)
			if ok {
				badArg = kbuild.Prefix + badArg
			} else { // src:TREE@GOOD..BAD[+PART]...: BAD is a revision of the same tree
				at := strings.LastIndex(arg, "@")
				rev, parts, _ := strings.Cut(arg[at+1:], "+")
				good, last, _ := strings.Cut(rev, "..")
				suffix := optionalPart(parts)
				goodArg, badArg = arg[:at+1]+good+suffix, arg[:at+1]+last+suffix
			}
			good, err := kbuild.Parse(goodArg)
			if err != nil {
				return nil, badSpec{err}
			}
			bad, err := kbuild.Parse(badArg)
			if err != nil {
				return nil, badSpec{err}
			}
			list, err := kbuild.Range(context.Background(), good, bad)
			if err != nil {
				return nil, badSpec{err}
			}
			return list, nil
		},
	})
}

func optionalPart(parts string) string {
	if parts == "" {
		return ""
	}
	return "+" + parts
}
