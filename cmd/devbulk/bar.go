package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// bar is a progress bar redrawn in place on a terminal:
//
//	devbulk: create ifb  45% |#########           | (2250/5000, 12345 it/s) [0s:0s]
//
// It is drawn here rather than with a progress-bar library because the one
// devbulk used (schollz/progressbar) imports net/http, whose package
// initialisation every scripted create and delete paid at start-up.
type bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
	start time.Time
	drawn time.Time // when last drawn; zero before the first
	done  int
	ended bool // finished or cleared: never drawn again
	now   func() time.Time
}

// barEvery is the least time between two redraws.
const barEvery = 100 * time.Millisecond

func newBar(w io.Writer, label string, total int) *bar {
	return &bar{w: w, label: label, total: total, start: time.Now(), now: time.Now}
}

// set records done and redraws when due; reaching the total clears the bar
// (a total of 0 is never drawn).
func (b *bar) set(done int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.done = done
	now := b.now()
	switch {
	case done >= b.total:
		b.ended = true
		fmt.Fprint(b.w, "\r\033[K")
	case b.drawn.IsZero() || now.Sub(b.drawn) >= barEvery:
		b.drawn = now
		fmt.Fprint(b.w, "\r"+b.line(now)+"\033[K")
	}
}

// clear removes a bar that did not finish (an interrupted phase).
func (b *bar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ended {
		b.ended = true
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// line is the bar's text at now: percentage, bar, count, rate, and the
// time taken and the time left at that rate.
func (b *bar) line(now time.Time) string {
	const width = 20
	elapsed := now.Sub(b.start)
	done := min(max(b.done, 0), b.total)
	fill := width * done / b.total
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	left := time.Duration(0)
	if rate > 0 {
		left = time.Duration(float64(b.total-done) / rate * float64(time.Second))
	}
	return fmt.Sprintf("devbulk: %s %3d%% |%s%s| (%d/%d, %.0f it/s) [%s:%s]", b.label, 100*done/b.total,
		strings.Repeat("#", fill), strings.Repeat(" ", width-fill), done, b.total, rate,
		elapsed.Round(time.Second), left.Round(time.Second))
}
