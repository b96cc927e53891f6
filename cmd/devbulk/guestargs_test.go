package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A guest's command line is read on the host before any VM boots: what
// this devbulk refuses is exit 2 there (issue 44, item 3); what only the
// guest's kernel can judge, and good command lines, go on to the guest.
func TestGuestArgsCheckedOnTheHost(t *testing.T) {
	for args, want := range map[string]string{
		"bench --count 0 --kind dummy":          `--count "0" out of range: dummy takes 1..`,
		"frobnicate":                            `unknown command "frobnicate"`,
		"create --kind ifb --count 1 --count 2": "create --count given twice",
		"netns churn --workers 0":               `--workers "0" out of range`,
		"netns frob":                            `unknown netns command "frob"`,
		"delete --strategy bogus":               "bogus",
		"move":                                  "move needs --to",
		"kinds --bogus":                         "--bogus",
	} {
		err := checkGuestArgs(context.Background(), strings.Fields(args))
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "the guest's command: ") {
			t.Errorf("%q: %v; want a usage error with %q", args, err, want)
		}
	}
	for _, args := range []string{"bench --kind dummy --count 100", "kinds", "rmmod --kind dummy", "netns churn --workers 2 --per-worker 10",
		"check --here", "bench --help", "create --kind vlan --count 10", "delete --strategy group", "cleanup",
		"netns create --count 100", "netns create --count 1000 --payload veth:1", "netns sequential --count 1000"} {
		if err := checkGuestArgs(context.Background(), strings.Fields(args)); err != nil {
			t.Errorf("%q: %v; want it passed on to the guest", args, err)
		}
	}
}
