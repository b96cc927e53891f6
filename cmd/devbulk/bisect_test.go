package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/bisect"
)

// A bisection that found nothing writes no last_good or first_bad (its
// indexes, 0, would read as the first kernel); one that found them writes
// both, with their specs (issue 44, item 10).
func TestBisectDocAnswersOnlyWhenFound(t *testing.T) {
	for _, found := range []bool{false, true} {
		r := &bisect.Result{Specs: []string{"a", "b", "c"}, Found: found, LastGood: 1, FirstBad: 2}
		b, err := json.Marshal(newBisectDoc(r, "churn"))
		s := string(b)
		has := strings.Contains(s, `"last_good":1,"first_bad":2,"last_good_spec":"b","first_bad_spec":"c"`)
		if err != nil || has != found || !found && (strings.Contains(s, `"last_good"`) || strings.Contains(s, `"first_bad"`)) {
			t.Errorf("found %v: %s, %v", found, b, err)
		}
	}
}
