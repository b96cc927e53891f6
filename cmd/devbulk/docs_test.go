//go:build !urfave_cli_no_docs

package main

import (
	"os"
	"path/filepath"
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
