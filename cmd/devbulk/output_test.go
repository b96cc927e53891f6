package main

import (
	"bytes"
	"testing"
	"time"
)

// The VM's stand-in for a progress bar: a line at the start, at most one
// per period, and one at the end.
func TestLineCounter(t *testing.T) {
	var b bytes.Buffer
	bar := lineCounter(&b, time.Hour)("N=3 serial delete", 3)
	for done := 1; done <= 3; done++ {
		bar(done)
	}
	if got := b.String(); got != "devbulk: N=3 serial delete: 1/3\ndevbulk: N=3 serial delete: 3/3\n" {
		t.Errorf("printed %q", got)
	}
}
