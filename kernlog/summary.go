package kernlog

import (
	"fmt"
	"io"
	"strings"
)

// Summary is what a Watcher saw.
type Summary struct {
	// Unread says why the kernel's log could not be read ("" when it was):
	// then no finding means nothing.
	Unread string `json:"unread,omitempty"`
	// Records counts the records read; Lost those the kernel overwrote
	// before they were read; Filtered the findings the noise list took.
	Records  int       `json:"records"`
	Lost     int       `json:"lost,omitempty"`
	Filtered int       `json:"filtered,omitempty"`
	Findings []Finding `json:"findings"`
}

// Write says what the kernel complained of, each finding with its phase
// and text, or that it read the log and found nothing (or could not).
func (s *Summary) Write(w io.Writer) {
	switch {
	case s == nil:
		return
	case s.Unread != "":
		fmt.Fprintf(w, "kernel log: not read (%s): the kernel's complaints are not known\n", s.Unread)
		return
	}
	var more []string
	if s.Filtered > 0 {
		more = append(more, fmt.Sprintf("%d filtered by the noise list", s.Filtered))
	}
	if s.Lost > 0 {
		more = append(more, fmt.Sprintf("%d records overwritten before devbulk read them", s.Lost))
	}
	tail := ""
	if len(more) > 0 {
		tail = "; " + strings.Join(more, ", ")
	}
	if len(s.Findings) == 0 {
		fmt.Fprintf(w, "kernel log: %d records read, no complaint%s\n", s.Records, tail)
		return
	}
	fmt.Fprintf(w, "kernel log: %d records read, %d complaints (findings)%s:\n", s.Records, len(s.Findings), tail)
	for _, f := range s.Findings {
		f.Write(w, "  ")
	}
}
