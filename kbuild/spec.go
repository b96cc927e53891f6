package kbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Prefix starts a kernel specification of a kernel built from source.
const Prefix = "src:"

// ErrBad marks what names no kernel that can be built (a usage error): a
// path that is not a kernel source, a revision that does not exist, a patch
// that does not apply, a config option this kernel does not have.
var ErrBad = errors.New("bad kernel source")

// ErrStep marks what a revision does not take (an ErrBad too): a patch or
// revert that does not apply, a config option its Kconfig does not have or
// keep. At a bisection's step, a commit that cannot be tested.
var ErrStep = fmt.Errorf("%w: a step does not apply", ErrBad)

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBad, fmt.Sprintf(format, args...))
}

func stepFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrStep, fmt.Sprintf(format, args...))
}

// Spec is a kernel from source, as src:PATH[@REV][+PART]... names it.
type Spec struct {
	// Path is absolute: a directory or a tarball.
	Path string
	// Rev is a git revision of Path; "" is the tree as it is.
	Rev string
	// Steps are the patches and reverts, in order.
	Steps []Step
	// Base is the base config: "" (devbulk's), "defconfig", or a file.
	Base string
	// Fragments are more config fragments, merged after devbulk's: files,
	// or the name of one of devbulk's (debug).
	Fragments []string
}

// Step is one change to the source: a patch file, or a commit to revert.
type Step struct {
	Patch  string
	Revert string
}

func (s Step) String() string {
	if s.Revert != "" {
		return "revert:" + s.Revert
	}
	return s.Patch
}

// IsSource reports whether a kernel specification's name is a source's.
func IsSource(name string) bool { return strings.HasPrefix(name, Prefix) }

// Parse reads src:PATH[@REV][+PART]...: the files it names must exist;
// revisions are checked when the source is prepared.
func Parse(name string) (*Spec, error) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok || rest == "" {
		return nil, bad("%q: want src:PATH[@REV][+PATCH|+revert:REV|+config:BASE|+fragment:debug|FILE]...", name)
	}
	parts := strings.Split(rest, "+")
	s := &Spec{}
	path, err := s.pathAndRev(parts[0])
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(s.Path); err != nil {
		return nil, bad("%s: %v", path, errors.Unwrap(err))
	} else if !st.IsDir() && tarball(s.Path) == "" {
		return nil, bad("%s is neither a directory nor a source tarball (.tar, .tar.gz, .tar.xz)", path)
	} else if !st.IsDir() && s.Rev != "" {
		return nil, bad("%s@%s: a tarball has no revisions (@REV names a git revision)", path, s.Rev)
	}
	for _, p := range parts[1:] {
		if err := s.part(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// pathAndRev splits PATH[@REV]: the path is what exists (a directory
// named linux@work stays whole), the revision what follows the first @
// after it (origin/master and HEAD@{1} hold / and @).
func (s *Spec) pathAndRev(arg string) (string, error) {
	if whole, err := absolute(arg); err == nil {
		if _, err := os.Stat(whole); err == nil {
			s.Path = whole
			return whole, nil
		}
	}
	for i := 0; i < len(arg); i++ {
		if arg[i] != '@' {
			continue
		}
		path, err := absolute(arg[:i])
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(path); err != nil || arg[:i] == "" {
			continue
		}
		if s.Rev = arg[i+1:]; s.Rev == "" {
			return "", bad("%q: an empty revision after @", arg)
		}
		s.Path = path
		return path, nil
	}
	path, _ := absolute(arg)
	s.Path = path
	return path, nil // Parse says it does not exist
}

// part reads one +PART.
func (s *Spec) part(p string) error {
	kind, arg, found := strings.Cut(p, ":")
	switch {
	case p == "":
		return bad("an empty +part")
	case found && kind == "revert":
		if arg == "" {
			return bad("+revert: names no commit")
		}
		s.Steps = append(s.Steps, Step{Revert: arg})
		return nil
	case found && kind == "config" && (arg == "devbulk" || arg == "defconfig"):
		s.Base = strings.TrimPrefix(arg, "devbulk")
		return nil
	case found && kind == "fragment" && builtinFragments[arg] != nil: // a file of that name: fragment:./debug
		s.Fragments = append(s.Fragments, arg)
		return nil
	}
	file, err := absolute(p)
	if found && (kind == "config" || kind == "fragment") {
		file, err = absolute(arg)
	}
	if err != nil {
		return err
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		what := "patch"
		if found {
			what = kind
		}
		return bad("+%s: no such %s file (parts are a patch FILE, revert:REV, config:devbulk|defconfig|FILE, fragment:debug|FILE)", p, what)
	}
	switch {
	case found && kind == "config":
		s.Base = file
	case found && kind == "fragment":
		s.Fragments = append(s.Fragments, file)
	default:
		s.Steps = append(s.Steps, Step{Patch: file})
	}
	return nil
}

// String writes the spec back, paths absolute.
func (s *Spec) String() string {
	var b strings.Builder
	b.WriteString(Prefix + s.Path)
	if s.Rev != "" {
		b.WriteString("@" + s.Rev)
	}
	for _, st := range s.Steps {
		b.WriteString("+" + st.String())
	}
	if s.Base != "" {
		b.WriteString("+config:" + s.Base)
	}
	for _, f := range s.Fragments {
		b.WriteString("+fragment:" + f)
	}
	return b.String()
}

// At is the spec with another revision of the same tree.
func (s *Spec) At(rev string) *Spec {
	c := *s
	c.Rev = rev
	return &c
}

// absolute makes path absolute, ~/ as the home directory.
func absolute(path string) (string, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		path = filepath.Join(home, rest)
	}
	return filepath.Abs(path)
}

// tarball is the tar flag that reads path's compression, or "" for a file
// that is not a tarball by its name.
func tarball(path string) string {
	switch {
	case strings.HasSuffix(path, ".tar"):
		return "-xf"
	case strings.HasSuffix(path, ".tar.gz"), strings.HasSuffix(path, ".tgz"):
		return "-xzf"
	case strings.HasSuffix(path, ".tar.xz"):
		return "-xJf"
	}
	return ""
}

// ParseRange reads a range of commits of one tree: src:TREE@GOOD..src:TREE@BAD,
// or src:TREE@GOOD..BAD[+PART]... (BAD a revision of the same tree, the
// parts both ends').
func ParseRange(arg string) (good, last *Spec, err error) {
	if g, b, ok := strings.Cut(arg, ".."+Prefix); ok {
		if good, err = Parse(g); err != nil {
			return nil, nil, err
		}
		last, err = Parse(Prefix + b)
		return good, last, err
	}
	s, err := Parse(arg)
	if err != nil {
		return nil, nil, err
	}
	g, b, ok := strings.Cut(s.Rev, "..")
	if !ok || g == "" || b == "" {
		return nil, nil, bad("%q is not a range: src:TREE@GOOD..BAD, or src:TREE@GOOD..src:TREE@BAD", arg)
	}
	return s.At(g), s.At(b), nil
}

// Range is the list a bisection walks from good to bad, two specs of one
// git tree that differ only in their revision: good, then every commit on
// bad's first-parent line after it (a merge is one step), as specs at each
// commit's id.
func Range(ctx context.Context, good, last *Spec) ([]string, error) {
	g, l := *good, *last
	g.Rev, l.Rev = "", ""
	switch {
	case good.Rev == "" || last.Rev == "":
		return nil, bad("a range of commits names both revisions: src:TREE@GOOD..src:TREE@BAD, or src:TREE@GOOD..BAD")
	case g.String() != l.String():
		return nil, bad("the range's ends must be one tree with the same parts: %s and %s", good, last)
	}
	src := &source{user: good.Path}
	gc, err := src.resolve(ctx, good.Rev)
	if err != nil {
		return nil, err
	}
	bc, err := src.resolve(ctx, last.Rev)
	if err != nil {
		return nil, err
	}
	if _, err := git(ctx, good.Path, "merge-base", "--is-ancestor", gc, bc); err != nil {
		return nil, bad("%s is not an ancestor of %s in %s", good.Rev, last.Rev, good.Path)
	}
	out, err := git(ctx, good.Path, "rev-list", "--reverse", "--first-parent", gc+".."+bc)
	if err != nil {
		return nil, err
	}
	list := []string{good.At(gc).String()}
	for _, c := range strings.Fields(out) {
		list = append(list, good.At(c).String())
	}
	if len(list) < 2 {
		return nil, bad("%s..%s holds no commit", good.Rev, last.Rev)
	}
	return list, nil
}

// Commits reports whether specs are a range of commits, as Range makes:
// one tree with the same parts, each at a revision, no kernel arguments.
func Commits(specs []string) bool {
	var first string
	for i, spec := range specs {
		s, err := Parse(spec)
		if err != nil || s.Rev == "" {
			return false
		}
		if i == 0 {
			first = s.At("").String()
		} else if s.At("").String() != first {
			return false
		}
	}
	return len(specs) > 1
}

// RevertOn is last (a bisection's bad end) with first's commit (the first
// bad one) reverted after its steps: KernelCI's confirmation of a culprit.
// "" when either is not a source at a revision. Kernel arguments after a
// space stay on the result.
func RevertOn(last, first string) string {
	lname, args, _ := strings.Cut(last, " ")
	fname, _, _ := strings.Cut(first, " ")
	l, err1 := Parse(lname)
	f, err2 := Parse(fname)
	if err1 != nil || err2 != nil || f.Rev == "" {
		return ""
	}
	return strings.TrimSpace(l.Reverted(f.Rev).String() + " " + args)
}

// Describe names the commit a spec (kernel arguments aside) is at, as git
// log says it: its id, subject and author; "" for anything else.
func Describe(ctx context.Context, spec string) string {
	name, _, _ := strings.Cut(spec, " ")
	s, err := Parse(name)
	if err != nil || s.Rev == "" {
		return ""
	}
	d, err := git(ctx, s.Path, "log", "-1", "--format=%h %s (%an <%ae>)", "--end-of-options", s.Rev)
	if err != nil {
		return ""
	}
	return d
}

// Reverted is the spec with rev reverted after its steps.
func (s *Spec) Reverted(rev string) *Spec {
	c := *s
	c.Steps = append(slices.Clone(s.Steps), Step{Revert: rev})
	return &c
}
