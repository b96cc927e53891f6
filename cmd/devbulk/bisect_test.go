package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/kernlog"
)

// A bisection that found nothing writes no last_good or first_bad (its
// indexes, 0, would read as the first kernel); one that found them writes
// both, with their specs (issue 44, item 10). The kernel's complaints
// during its boots are in the document when there were any.
func TestBisectDocAnswersOnlyWhenFound(t *testing.T) {
	for _, found := range []bool{false, true} {
		r := &bisect.Result{Specs: []string{"a", "b", "c"}, Found: found, LastGood: 1, FirstBad: 2}
		var complaints []bootComplaints
		if found {
			complaints = []bootComplaints{{"c", []kernlog.Finding{{Phase: "rep 1 delete group", Class: "warning", Text: []string{"WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 x"}}}}}
		}
		b, err := json.Marshal(newBisectDoc(r, "churn", complaints))
		s := string(b)
		has := strings.Contains(s, `"last_good":1,"first_bad":2,"last_good_spec":"b","first_bad_spec":"c"`)
		if err != nil || has != found || !found && (strings.Contains(s, `"last_good"`) || strings.Contains(s, `"first_bad"`)) {
			t.Errorf("found %v: %s, %v", found, b, err)
		}
		if strings.Contains(s, `"kernel_complaints":[{"spec":"c","findings":[{"phase":"rep 1 delete group"`) != found {
			t.Errorf("found %v: complaints %v written as %s", found, complaints, s)
		}
	}
}
