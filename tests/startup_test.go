package tests

import (
	"os"
	"os/exec"
	"path/filepath"
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
