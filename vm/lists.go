package vm

import (
	"fmt"
	"strings"
)

// listSource is a way to name the ordered kernel configurations a
// bisection walks (first good, last bad): a file, a directory of builds, a
// range of Debian's packages, a range of commits of a source tree. Each is
// a file of its own (list_*.go); listSources orders them.
type listSource struct {
	// form is how an argument of this source is written, for help.
	form string
	// accepts says the argument is this source's.
	accepts func(arg string) bool
	// list turns it into kernel configurations, at least two, none twice;
	// an argument that names nothing is an error matching ErrBadSpec.
	list func(arg string) ([]string, error)
}

// listSources are tried in this order: the sources that recognise their
// argument by its form before the file, which takes anything.
var listSources = []*listSource{srcList, rangeList, buildsList, fileList}

// KernelList is the ordered list of kernel configurations arg names, by
// the first source that accepts it (ListForms). Nothing is fetched.
func KernelList(arg string) ([]string, error) {
	for _, s := range listSources {
		if s.accepts(arg) {
			return s.list(arg)
		}
	}
	return nil, badSpec{fmt.Errorf("--kernels %q: give %s", arg, ListForms())}
}

// ListForms says how each source's argument is written.
func ListForms() string {
	var forms []string
	for _, s := range listSources {
		forms = append(forms, s.form)
	}
	return strings.Join(forms, ", or ")
}
