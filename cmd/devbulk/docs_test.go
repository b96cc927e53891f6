//go:build !urfave_cli_no_docs

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/check"
)

// The man page and the fish completion are generated from the command
// definitions; this test fails when they are not current.
// DEVBULK_WRITE_DOCS=1 go test ./cmd/devbulk -run TestGeneratedDocs rewrites them.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	t.Setenv("DEVBULK_STATE_DIR", "") // flag texts name the default directories
	app := newApp()
	app.Version = "" // the build's, not the page's
	man, err := app.ToManWithSection(1)
	if err != nil {
		t.Fatal(err)
	}
	man = manSections(t, man)
	fish, err := app.ToFishCompletion()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"../../docs/devbulk.1": man, "../../completions/devbulk.fish": fish} {
		if os.Getenv("DEVBULK_WRITE_DOCS") != "" {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is not what the command definitions give (%v): DEVBULK_WRITE_DOCS=1 go test ./cmd/devbulk -run TestGeneratedDocs", path, err)
		}
	}
}

// manSections gives the generated page a real SYNOPSIS (the library's
// reads "devbulk / Usage:") and the sections a man page has that the
// command definitions do not: EXIT STATUS, ENVIRONMENT, FILES.
func manSections(t *testing.T, man string) string {
	t.Helper()
	start, end := strings.Index(man, ".SH SYNOPSIS"), strings.Index(man, ".SH COMMANDS")
	if start < 0 || end < start {
		t.Fatal("the generated man page has no SYNOPSIS before COMMANDS")
	}
	synopsis := ".SH SYNOPSIS\n\\fBdevbulk\\fP \\fICOMMAND\\fP [\\fIOPTIONS\\fP] [\\fIARGUMENTS\\fP]\n.br\n" +
		"\\fBdevbulk\\fP \\fBhelp\\fP [\\fICOMMAND\\fP]\n\n"
	return man[:start] + synopsis + man[end:] + manTail
}

const manTail = `
.SH EXIT STATUS
.TP
.B 0
success (check: no regression).
.TP
.B 1
the run failed; check: a scenario failed or regressed.
.TP
.B 2
bad usage or input: nothing was created, and one line on stderr names the problem, the flag or file, and the valid range.
.TP
.B 4
not supported here (kselftest's SKIP): a kind this kernel lacks, a module that cannot be unloaded, a program devbulk needs (qemu, devbulk-plot).
.TP
.B 130
interrupted (SIGINT, SIGTERM): devbulk stopped and deleted what it had created.

.SH ENVIRONMENT
.TP
.B DEVBULK_STATE_DIR
where devbulk keeps its run records (default /run/devbulk/runs) and, when set, the namespaces netns create keeps (DIR/netns); an absolute path, a directory only root may write.
.TP
.B GOGC, GOMEMLIMIT
Go's heap pacing; unset, devbulk uses GOGC=25 past 4 MiB live and a 40 MiB soft limit.
.TP
.B XDG_CACHE_HOME, HOME
where the kernels devbulk vm and check --vm fetch are cached (devbulk/kernels under the user cache directory).
.TP
.B TMPDIR
where the work directories of devbulk vm and lava run go.
.TP
.B PATH
where devbulk finds what it runs: devbulk-plot (beside devbulk first), ip, qemu-system-x86_64, lava-run, xz, zstd, apt-get.

.SH FILES
.TP
.I /run/devbulk/runs/*.json
one record per run that create made (or a killed devbulk left): devbulk runs lists them, delete and cleanup use them.
.TP
.I /run/devbulk/netns/
namespaces devbulk netns create keeps while it runs.
.TP
.I ~/.cache/devbulk/kernels/
Debian kernels fetched with apt for the VM.
.TP
.I $TMPDIR/devbulk-vm*, $TMPDIR/devbulk-lava-*
work directories of a running devbulk vm or lava run; cleanup removes those of a killed devbulk.

.SH SEE ALSO
ip(8), ip-link(8), ip-netns(8); README.md and docs/ in devbulk's repository.
`

// Every variable devbulk's own code reads is in the man page's ENVIRONMENT.
func TestManPageNamesEveryVariable(t *testing.T) {
	// os.Getenv, os.LookupEnv, and the env func paceHeap is given.
	read := regexp.MustCompile(`\b(?:Getenv|LookupEnv|env)\("([A-Z][A-Z0-9_]*)"\)`)
	named := map[string]bool{}
	env, _, _ := strings.Cut(manTail[strings.Index(manTail, ".SH ENVIRONMENT"):], ".SH FILES")
	for _, line := range strings.Split(env, "\n") {
		if names, ok := strings.CutPrefix(line, ".B "); ok {
			for _, n := range strings.Split(names, ", ") {
				named[n] = true
			}
		}
	}
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/tests/") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range read.FindAllSubmatch(b, -1) {
			if !named[string(m[1])] {
				t.Errorf("%s reads %s, which the man page's ENVIRONMENT does not name", path, m[1])
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every devbulk command line the README and docs/ show still parses: its
// command, subcommand and flags exist and take what is given (issue 40:
// the tour's output once came from an older binary). Lines with
// placeholders ([--flag F], …) are left out.
func TestDocumentedCommandsParse(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md", "../../CONTRIBUTING.md")
	inline := regexp.MustCompile("`(\\./devbulk [^`]+)`")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "# "))
			if strings.HasPrefix(line, "./devbulk ") {
				lines = append(lines, line)
			}
			for _, m := range inline.FindAllStringSubmatch(line, -1) {
				lines = append(lines, m[1])
			}
		}
		for _, line := range lines {
			args, ok := shellWords(line)
			if !ok {
				continue
			}
			n++
			if err := parses(args); err != nil {
				t.Errorf("%s: %q no longer parses: %v", filepath.Base(f), line, err)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d documented command lines found", n)
	}
}

// shellWords splits a documented command line as a shell would, up to a
// comment, pipe or redirection; ok is false for lines with placeholders.
func shellWords(line string) (args []string, ok bool) {
	if strings.ContainsAny(line, "[…$") || strings.Contains(line, "...") {
		return nil, false
	}
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				args, in = append(args, cur.String()), false
				cur.Reset()
			}
		case !in && strings.ContainsRune("#|>&;<", r):
			return args, len(args) > 1
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	return args, quote == 0 && len(args) > 1
}

// parses runs args through devbulk's command line with every action
// stubbed: what is left are the library's flag parsing and devbulk's own
// checks of commands and subcommands. vm's guest command is parsed too.
func parses(args []string) error {
	app := newApp()
	var stub func(cmds []*cli.Command)
	stub = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.Action, c.Before = func(*cli.Context) error { return nil }, nil
			stub(c.Subcommands)
		}
	}
	stub(app.Commands)
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	for _, c := range app.Commands {
		c.OnUsageError = app.OnUsageError
	}
	args[0] = "devbulk"
	line, err := commandLine(app, args)
	if err == nil {
		err = app.Run(line)
	}
	if i := slices.Index(args, "--"); err == nil && i > 0 && args[1] == "vm" && i+1 < len(args) {
		return parses(append([]string{"devbulk"}, args[i+1:]...))
	}
	return err
}

// Every relative link of README.md and docs/ leads to a file, and to a
// heading of it where it names one: pages moved (the front page's results
// went to docs/results.md) leave no dead link behind.
func TestDocumentLinks(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md", "../../CONTRIBUTING.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", filepath.Base(f), m[1], err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headings(t, path), anchor) {
				t.Errorf("%s: link %s: no heading #%s in %s", filepath.Base(f), m[1], anchor, path)
			}
		}
	}
}

// headings are the anchors a Markdown file's headings get (GitHub's slugs).
func headings(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			slug := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
					return unicode.ToLower(r)
				}
				return -1
			}, title)
			out = append(out, slug)
		}
	}
	return out
}

// Every package of the module has its row in docs/layout.md.
func TestLayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile("../../docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
			return filepath.SkipDir
		}
		if gos, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gos) == 0 || rel == "." {
			return nil
		}
		if !strings.Contains(string(b), "| `"+rel+"/` |") {
			t.Errorf("docs/layout.md has no row for package %s/", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The command line a scenario prints to reproduce it (check.ScenarioSpec.Command,
// spelled by check) parses with devbulk's own flags, for every scenario of
// devbulk's suites: a flag renamed here fails this, not a user's copy and paste.
func TestScenarioCommandsParse(t *testing.T) {
	for _, name := range check.SuiteNames() {
		raw, _ := check.NamedSuite(name)
		s, err := check.ParseSuite(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range s.Scenarios {
			sc.Profile() // its --profile too
			if err := parses(append([]string{"devbulk"}, sc.Command()...)); err != nil {
				t.Errorf("%s %s: devbulk %s: %v", s.Name, sc.Name, strings.Join(sc.Command(), " "), err)
			}
		}
	}
}
