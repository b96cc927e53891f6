package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/internal/safefs"
)

// plotProgram draws the charts (cmd/devbulk-plot). It is a program of its
// own so that gonum/plot's package initialisation (a dozen fonts parsed)
// is not part of every devbulk start.
const plotProgram = "devbulk-plot"

// exitUndrawable is devbulk-plot's exit code for a document it cannot draw
// (not 2, which Go gives a panic and the flag package a bad flag).
const exitUndrawable = 3

// undrawable is a document devbulk-plot refused (its exit code
// exitUndrawable), with the one line it said why.
type undrawable string

func (u undrawable) Error() string { return string(u) }

// plotter finds devbulk-plot beside devbulk's own executable, where only
// root (or devbulk's owner) can have put it, else in PATH.
func plotter() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), plotProgram)
		if safefs.Program(p) == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(plotProgram); err == nil {
		return p, nil
	}
	return "", devbulk.NotSupported("drawing SVG needs %s beside devbulk or in PATH (go install github.com/devbulk/devbulk/cmd/%s)", plotProgram, plotProgram)
}

// drawSVG has devbulk-plot draw a result document (bench, netns or check
// JSON) and returns the SVG; view, when given, is a bench's other chart:
// memory (its kernel memory per device) or bystander (its latency over
// time).
func drawSVG(ctx context.Context, doc []byte, view string) ([]byte, error) {
	prog, err := plotter()
	if err != nil {
		return nil, err
	}
	var args []string
	if view != "" {
		args = append(args, "-"+view)
	}
	var out, stderr bytes.Buffer
	cmd := child.Command(ctx, prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(doc), &out, &stderr
	err = cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == exitUndrawable:
		return nil, undrawable(msg)
	case err != nil:
		return nil, fmt.Errorf("%s: %v: %s", prog, err, msg)
	}
	return out.Bytes(), nil
}
