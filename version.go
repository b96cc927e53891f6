package devbulk

import "runtime/debug"

const module = "github.com/devbulk/devbulk"

// Version is devbulk's version as the Go toolchain recorded it in the
// binary: the module version of the devbulk command (a tag, or a
// pseudo-version from the checkout's commit), or the version of the devbulk
// module a program imports; "dev" when the build recorded none.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := info.Main.Version
	if info.Main.Path != module {
		v = ""
		for _, d := range info.Deps {
			if d.Path == module {
				v = d.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}
