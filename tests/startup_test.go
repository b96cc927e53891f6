package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// devbulk's start-up as a whole process, `devbulk --version`, and a minimal
// static Go program's beside it (issue 25 asks for at most twice as long):
//
//	go test -run - -bench Startup ./tests
//
// docs/measurements.md, "Start-up", has the figures.
func BenchmarkStartup(b *testing.B) {
	bin := binary(b)
	for b.Loop() {
		if err := exec.Command(bin, "--version").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStartupMinimalGo(b *testing.B) {
	dir := b.TempDir()
	main := "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"x\\n\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module minimal\n\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "minimal", ".")
	build.Dir, build.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	bin := filepath.Join(dir, "minimal")
	for b.Loop() {
		if err := exec.Command(bin).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// No package of devbulk's does work at init that every command pays for
// (a regular expression compiled there costs hundreds of allocations and
// a millisecond or two of each start; kernlog's classes once cost ~2 ms):
// what a package needs it makes when first used. Counted in allocations,
// which do not depend on the machine's speed; 100 is several times what a
// package's tables and flags take.
func TestInitAllocatesLittle(t *testing.T) {
	cmd := exec.Command(binary(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/devbulk/devbulk\S*|main) @.* (\d+) allocs$`)
	inits := line.FindAllStringSubmatch(string(out), -1)
	if len(inits) < 5 {
		t.Fatalf("%d of devbulk's packages in the init trace, want all of them:\n%s", len(inits), out)
	}
	for _, m := range inits {
		if n, _ := strconv.Atoi(m[2]); n > 100 {
			t.Errorf("package %s allocates %d times at init: make what it needs when first used", m[1], n)
		}
	}
}
