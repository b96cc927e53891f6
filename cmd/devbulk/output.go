package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/vm"
)

var (
	svgFlag   = &cli.StringFlag{Name: "svg", Usage: "also draw the result as an SVG chart in `FILE` (see devbulk plot)"}
	quietFlag = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"}
)

// formatFlag is --format with the given choices, the first the default.
func formatFlag(choices ...string) *cli.StringFlag {
	return &cli.StringFlag{Name: "format", Value: choices[0], Usage: "output: " + strings.Join(choices, ", ")}
}

// outputFormat reads --format (--json is --format json), checked against
// the command's choices.
func outputFormat(c *cli.Context, choices ...string) (string, error) {
	f := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && f != "json" {
			return "", usagef("--json and --format %s: choose one", f)
		}
		return "json", nil
	}
	if !slices.Contains(choices, f) {
		return "", usagef("--format %q: valid are %s", f, strings.Join(choices, ", "))
	}
	return f, nil
}

// progress returns a progress printer for stderr when it is a terminal (or
// devbulk runs in its VM for a host whose stderr is one, or in a fleet's
// job) and --quiet is not given, else nil.
func progress(c *cli.Context) func(string) {
	if c.Bool("quiet") || !(isTerminal(2) || vm.WantsProgress() || inFleetJob(c)) {
		return nil
	}
	return func(s string) { fmt.Fprintf(os.Stderr, "devbulk: %s\n", s) }
}

// counter returns a maker of progress bars on stderr, under the same
// conditions as progress. A bar ends when it reaches its total. In the VM,
// whose stderr reaches the host as it is written, and in a fleet's job, a
// line every 10 s stands in for the bar.
func counter(c *cli.Context) func(label string, total int) func(done int) {
	switch {
	case c.Bool("quiet"):
		return nil
	case vm.WantsProgress() || inFleetJob(c):
		return lineCounter(os.Stderr, 10*time.Second)
	case !isTerminal(2):
		return nil
	}
	return func(label string, total int) func(int) {
		// Drawn at the first count, not before: a phase may wait (for the
		// kernel's cleanup worker, a module) before its first step.
		// Fed from several goroutines (a sampler, parallel workers).
		var once sync.Once
		var b *bar
		return func(done int) {
			once.Do(func() { b = newBar(os.Stderr, label, total); live.Store(b) })
			b.set(done)
		}
	}
}

// live is the progress bar last drawn: an error message clears it first,
// rather than being glued to its end.
var live atomic.Pointer[bar]

// clearProgress clears the bar last drawn, if it did not finish (an
// interrupted phase), before an error or a result is printed.
func clearProgress() {
	if b := live.Swap(nil); b != nil {
		b.clear()
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeSVG draws the result document doc into --svg's file, when given.
func writeSVG(c *cli.Context, doc any) error {
	path := c.String("svg")
	if path == "" {
		return nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	// Not cancelled with the run: an interrupted run's partial report is
	// drawn too (devbulk-plot is quick, and dies with devbulk).
	svg, err := drawSVG(context.WithoutCancel(c.Context), b, "")
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	return os.WriteFile(path, svg, 0o644)
}

// firstSaying returns the run's error, or, when there is none, the error of
// writing its outputs; an output's error behind a run's (an interrupted
// run's chart that could not be drawn) is said on stderr, not lost.
func firstSaying(run, output error) error {
	if run == nil {
		return output
	}
	if output != nil {
		fmt.Fprintf(os.Stderr, "devbulk: %v\n", output)
	}
	return run
}

// explainWithTable refuses --explain beside JSON or another format: it is
// words under the table.
func explainWithTable(c *cli.Context) error {
	if f := c.String("format"); c.Bool("explain") && (c.Bool("json") || f != "" && f != "table") {
		other := "--json"
		if !c.Bool("json") {
			other = "--format " + f
		}
		return usagef("--explain says in words how the table's figures were taken: it goes with the table, not %s (docs/method.md describes the document's fields)", other)
	}
	return nil
}

// outputs are the files that --svg, --series, --output and --save name.
type outputs struct{ made []string }

// create makes the output files before a command runs, so that a path that
// cannot be written is found before minutes of work, not after.
func (o *outputs) create(c *cli.Context) error {
	if err := checkStateDir(); err != nil {
		return err
	}
	if err := explainWithTable(c); err != nil {
		return err
	}
	if c.String("svg") != "" {
		if _, err := plotter(); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	for _, name := range []string{"svg", "series", "output", "save"} {
		path := c.String(name)
		if path == "" || path == "-" {
			continue
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			o.made = append(o.made, path)
		} else if errors.Is(err, os.ErrExist) {
			f, err = os.OpenFile(path, os.O_WRONLY, 0)
		}
		if err != nil {
			return usagef("--%s: %v", name, err)
		}
		f.Close()
	}
	return nil
}

// removeEmpty removes the files create made that nothing was written to.
func (o *outputs) removeEmpty() {
	for _, path := range o.made {
		if st, err := os.Stat(path); err == nil && st.Size() == 0 {
			os.Remove(path)
		}
	}
}

// writeFile creates path and fills it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// inFleetJob reports whether devbulk reports to a fleet (check --format
// lava): its console is a terminal that a log keeps line by line, where
// bars would be redrawn into hundreds of lines.
func inFleetJob(c *cli.Context) bool { return c.String("format") == "lava" }

// lineCounter makes counters that print "label: done/total" at most once
// per every, and at the end.
func lineCounter(w io.Writer, every time.Duration) func(label string, total int) func(done int) {
	return func(label string, total int) func(int) {
		var last time.Time
		return func(done int) {
			if now := time.Now(); done >= total || now.Sub(last) >= every {
				last = now
				fmt.Fprintf(w, "devbulk: %s: %d/%d\n", label, done, total)
			}
		}
	}
}
