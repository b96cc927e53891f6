//go:build !urfave_cli_no_docs

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	read := regexp.MustCompile(`(?:Getenv|LookupEnv)\("([A-Z][A-Z0-9_]*)"\)`)
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
