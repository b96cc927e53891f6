package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestBarDrawsCountRateAndClearsAtTheEnd(t *testing.T) {
	var w strings.Builder
	b := newBar(&w, "create ifb", 5000)
	t0 := time.Now()
	clock := t0.Add(2 * time.Second)
	b.start, b.now = t0, func() time.Time { return clock }
	b.set(2500)
	want := regexp.MustCompile(`^\rdevbulk: create ifb  50% \|#{10} {10}\| \(2500/5000, 1250 it/s\) \[2s:2s\]\x1b\[K$`)
	if !want.MatchString(w.String()) {
		t.Fatalf("first draw %q", w.String())
	}
	w.Reset()
	clock = clock.Add(barEvery / 2)
	b.set(2600)
	if w.Len() != 0 {
		t.Errorf("redrawn within %v: %q", barEvery, w.String())
	}
	clock = clock.Add(barEvery)
	b.set(3000)
	if !strings.Contains(w.String(), "(3000/5000,") {
		t.Errorf("not redrawn after %v: %q", barEvery, w.String())
	}
	w.Reset()
	b.set(5000)
	if w.String() != "\r\x1b[K" {
		t.Errorf("at the total: %q, want the line cleared", w.String())
	}
	w.Reset()
	b.set(4000)
	b.clear()
	if w.Len() != 0 {
		t.Errorf("a finished bar drew again: %q", w.String())
	}
}

func TestBarClearedWhenInterrupted(t *testing.T) {
	var w strings.Builder
	b := newBar(&w, "delete (serial)", 10)
	b.set(3)
	w.Reset()
	b.clear()
	b.clear()
	if w.String() != "\r\x1b[K" {
		t.Errorf("cleared as %q, want one clearing", w.String())
	}
	// A phase of nothing to do draws nothing.
	w.Reset()
	none := newBar(&w, "delete (serial)", 0)
	none.set(0)
	none.clear()
	if strings.Contains(w.String(), "devbulk:") {
		t.Errorf("a total of 0 drew %q", w.String())
	}
}
