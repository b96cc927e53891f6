package kbuild

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// guestConfig is devbulk's fragment: what its VM guest and every scenario
// need, merged over every base config.
//
//go:embed guest.config
var guestConfig []byte

// debugConfig is the debug fragment (+fragment:debug): the kernel's own
// instruments for what a teardown breaks.
//
//go:embed debug.config
var debugConfig []byte

// builtinFragments are the fragments devbulk has by name.
var builtinFragments = map[string][]byte{"debug": debugConfig}

// fragment reads a spec's fragment: one of devbulk's by name, else a file.
func fragment(f string) ([]byte, error) {
	if b, ok := builtinFragments[f]; ok {
		return b, nil
	}
	return os.ReadFile(f)
}

// configKey names a spec's config inputs: the compiler, the base
// (devbulk's, defconfig, or the file's contents), devbulk's fragment and
// the others.
func configKey(ctx context.Context, s *Spec) (string, error) {
	cc, err := run(ctx, "", "gcc", "--version")
	if err != nil {
		return "", err
	}
	h := []byte(lastLine(strings.SplitN(cc, "\n", 2)[0]) + "\nbase:" + s.Base + "\n")
	if s.Base != "" && s.Base != "defconfig" {
		b, err := os.ReadFile(s.Base)
		if err != nil {
			return "", err
		}
		h = append(h, b...)
	}
	h = append(h, guestConfig...)
	for _, f := range s.Fragments {
		b, err := fragment(f)
		if err != nil {
			return "", err
		}
		h = append(h, b...)
	}
	return digest(h)[:12], nil
}

// configure writes build/.config: the base, then devbulk's fragment and the
// spec's, merged by the kernel's own scripts/kconfig/merge_config.sh, then
// olddefconfig; an option a fragment asks for that did not survive is an
// error naming it (and what it depends on, as Kconfig says).
func configure(ctx context.Context, srcDir, build string, s *Spec) error {
	if err := os.MkdirAll(build, 0o755); err != nil {
		return err
	}
	frag := filepath.Join(build, "devbulk-guest.config")
	if err := os.WriteFile(frag, guestConfig, 0o644); err != nil {
		return err
	}
	frags := []string{frag}
	for _, f := range s.Fragments {
		if b, ok := builtinFragments[f]; ok { // merge_config.sh reads files
			f = filepath.Join(build, "devbulk-"+f+".config")
			if err := os.WriteFile(f, b, 0o644); err != nil {
				return err
			}
		}
		frags = append(frags, f)
	}
	// The first make writes build/Makefile, which merge_config.sh's own
	// make (run in build/, never in the source) goes through.
	base := "allnoconfig"
	if s.Base == "defconfig" {
		base = "defconfig"
	}
	if _, err := makeIn(ctx, srcDir, build, "-s", base); err != nil {
		return fmt.Errorf("%w: make %s: %w", ErrBuild, base, err)
	}
	args := []string{"-O", "."}
	switch s.Base {
	case "":
		args = append([]string{"-n"}, args...) // allnoconfig, the fragments on top
		args = append(args, frags...)
	case "defconfig":
		args = append(args, append([]string{".config"}, frags...)...)
	default:
		b, err := os.ReadFile(s.Base)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(build, "devbulk-base.config"), b, 0o644); err != nil {
			return err
		}
		args = append(args, append([]string{"devbulk-base.config"}, frags...)...)
	}
	if _, err := run(ctx, build, filepath.Join(srcDir, "scripts", "kconfig", "merge_config.sh"), args...); err != nil {
		return fmt.Errorf("%w: merge_config.sh: %w", ErrBuild, err)
	}
	if _, err := makeIn(ctx, srcDir, build, "-s", "olddefconfig"); err != nil {
		return fmt.Errorf("%w: make olddefconfig: %w", ErrBuild, err)
	}
	return survived(srcDir, build, frags)
}

// makeIn runs make in the source, out of tree.
func makeIn(ctx context.Context, srcDir, build string, args ...string) (string, error) {
	return run(ctx, "", "make", append([]string{"-C", srcDir, "O=" + build}, args...)...)
}

// Compiled when a .config is first read, not at every command's start.
var (
	option = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(CONFIG_[A-Za-z0-9_]+)=(.*)$`) })
	unset  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^# (CONFIG_[A-Za-z0-9_]+) is not set$`) })
)

// readConfig reads a .config or fragment: each option's value ("n" where
// it is not set).
func readConfig(path string) (map[string]string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	vals := map[string]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := option().FindStringSubmatch(line); m != nil {
			vals[m[1]], order = m[2], append(order, m[1])
		} else if m := unset().FindStringSubmatch(line); m != nil {
			vals[m[1]], order = "n", append(order, m[1])
		}
	}
	return vals, order, sc.Err()
}

// survived checks that every option the fragments ask for is in the final
// .config as asked (a module asked for may be built in).
func survived(srcDir, build string, frags []string) error {
	final, _, err := readConfig(filepath.Join(build, ".config"))
	if err != nil {
		return err
	}
	// A later fragment overrides an earlier one, as merge_config.sh does.
	want, order := map[string]string{}, []string(nil)
	for _, frag := range frags {
		w, o, err := readConfig(frag)
		if err != nil {
			return err
		}
		for _, name := range o {
			if _, seen := want[name]; !seen {
				order = append(order, name)
			}
			want[name] = w[name]
		}
	}
	var lost []string
	for _, name := range order {
		got := final[name]
		if got == "" {
			got = "n"
		}
		if got == want[name] || want[name] == "m" && got == "y" {
			continue
		}
		lost = append(lost, lostOption(srcDir, name, want[name], got))
	}
	if len(lost) > 0 {
		// This revision's Kconfig: at a bisection's step, a skip.
		return stepFailed("the config asks for what this kernel did not keep: %s", strings.Join(lost, "; "))
	}
	return nil
}

// lostOption says what became of an option: unknown to this kernel, or
// what Kconfig says it depends on.
func lostOption(srcDir, name, want, got string) string {
	deps, known := dependsOn(srcDir, strings.TrimPrefix(name, "CONFIG_"))
	switch {
	case !known:
		return fmt.Sprintf("%s=%s, which this kernel does not have", name, want)
	case len(deps) > 0:
		return fmt.Sprintf("%s=%s became %s (it depends on %s)", name, want, got, strings.Join(deps, " && "))
	}
	return fmt.Sprintf("%s=%s became %s", name, want, got)
}

// dependsOn reads the Kconfig files for symbol's "depends on" lines, and
// whether it is defined at all.
func dependsOn(srcDir, symbol string) ([]string, bool) {
	var deps []string
	known := false
	head := regexp.MustCompile(`^\s*(menu)?config\s+` + regexp.QuoteMeta(symbol) + `\s*$`)
	filepath.WalkDir(srcDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "Documentation" || d.Name() == "tools") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), "Kconfig") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		in := false
		for _, line := range strings.Split(string(b), "\n") {
			t := strings.TrimSpace(line)
			switch {
			case head.MatchString(line):
				in, known = true, true
			case in && (strings.HasPrefix(t, "config ") || strings.HasPrefix(t, "menuconfig ") || strings.HasPrefix(t, "endmenu") || strings.HasPrefix(t, "choice")):
				in = false
			case in && strings.HasPrefix(t, "depends on "):
				if dep := strings.TrimPrefix(t, "depends on "); !slices.Contains(deps, dep) {
					deps = append(deps, dep)
				}
			}
		}
		return nil
	})
	return deps, known
}
