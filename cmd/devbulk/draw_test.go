package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"
)

// fakePlot puts a devbulk-plot shell script in a PATH of its own.
func fakePlot(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, plotProgram), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":/usr/bin:/bin")
}

// drawSVG hands devbulk-plot the document on stdin and -memory when
// asked, and returns what it wrote; its exit 3 is a document it cannot
// draw, with its line; any other failure carries its stderr; without it,
// an error that says what is missing.
func TestDrawSVG(t *testing.T) {
	fakePlot(t, `doc=$(cat)
case "$doc" in
bad) echo "not a devbulk result document" >&2; exit 3;;
crash) echo "panic: boom" >&2; exit 2;;
esac
echo "<svg $*>$doc</svg>"
`)
	ctx := context.Background()
	if out, err := drawSVG(ctx, []byte("doc"), "memory"); err != nil || string(out) != "<svg -memory>doc</svg>\n" {
		t.Errorf("drawn %q, %v", out, err)
	}
	u := undrawable("")
	if _, err := drawSVG(ctx, []byte("bad"), ""); !errors.As(err, &u) || string(u) != "not a devbulk result document" {
		t.Errorf("exit 3: %v", err)
	}
	if _, err := drawSVG(ctx, []byte("crash"), ""); err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("exit 2: %v, want a failure with its stderr, not an undrawable document", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := drawSVG(ctx, []byte("doc"), ""); !errors.Is(err, devbulk.ErrNotSupported) || !strings.Contains(err.Error(), "needs devbulk-plot") {
		t.Errorf("without devbulk-plot: %v", err)
	}
}
