// Command devbulk-plot draws a devbulk result document as SVG: it reads the
// document on stdin and writes the chart on stdout. devbulk runs it for
// `devbulk plot` and for --svg; it is a program of its own so that the
// charts' dependencies (gonum/plot, whose package initialisation parses a
// dozen fonts, and LaTeX and PDF support) are not initialised at every
// start of devbulk, whose scripted create and delete are timed as whole
// processes.
//
//	devbulk-plot [-memory] < RESULT.json > RESULT.svg
//
// A document it cannot draw exits 3 with one line on stderr (devbulk's
// plot then exits 2, naming the document); a bad flag exits 2.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"gonum.org/v1/plot"

	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/charts"
)

func main() {
	memory := flag.Bool("memory", false, "of a bench report: the kernel's memory per device against N")
	bystander := flag.Bool("bystander", false, "of a bench report with a bystander: its latency over time, the phases shaded")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: devbulk-plot [-memory|-bystander] < RESULT.json > RESULT.svg")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	doc, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(1, err)
	}
	draw := charts.FromDocument
	switch {
	case *memory:
		draw = benchOf(charts.BenchMemory, "--memory")
	case *bystander:
		draw = benchOf(charts.Bystander, "--bystander")
	}
	p, err := draw(doc)
	if err != nil {
		fail(3, err) // devbulk's exitUndrawable
	}
	w := bufio.NewWriter(os.Stdout)
	if err := charts.WriteSVG(w, p); err != nil {
		fail(1, err)
	}
	if err := w.Flush(); err != nil {
		fail(1, err)
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(code)
}

// benchOf draws a bench report with chart, which flag asked for.
func benchOf(chart func(*bench.Report) (*plot.Plot, error), flag string) func([]byte) (*plot.Plot, error) {
	return func(b []byte) (*plot.Plot, error) {
		var r bench.Report
		if err := json.Unmarshal(b, &r); err != nil || r.Kind == "" {
			return nil, fmt.Errorf("%s draws a bench report (bench --json): %v", flag, cmp.Or(err, errors.New("no kind")))
		}
		return chart(&r)
	}
}
