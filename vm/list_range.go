package vm

import (
	"os"
	"strings"
)

// A range of Debian's packages, GOOD..BAD (debian:6.1.0-47..debian:6.1.0-57;
// bisect's --good and --bad are this range): every image package between
// them in apt's lists (DebianRange).
var rangeList = &listSource{form: "GOOD..BAD, Debian kernels (debian:6.1.0-47..debian:6.1.0-57)",
	accepts: func(arg string) bool {
		good, bad, ok := strings.Cut(arg, "..")
		_, err := os.Stat(arg)
		return ok && good != "" && bad != "" && !strings.Contains(arg, "/") && err != nil
	},
	list: func(arg string) ([]string, error) {
		good, bad, _ := strings.Cut(arg, "..")
		return DebianRange(good, bad)
	},
}
