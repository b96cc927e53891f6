package check

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/netnsbench"
)

// netnsKind is what a netns scenario's name means: its spec made into a
// run (checked), the namespaces a run makes, and its size on devbulk's
// command line. Each kind is one entry of netnsKinds.
type netnsKind struct {
	prepare func(n *NetnsSpec) (netnsRun, error)
	count   func(n *NetnsSpec) int
	size    func(n *NetnsSpec) []string // the command's flags for a run's size
	rounds  bool                        // the command takes --repeat
}

// netnsRun is one run of a netns scenario, checked: the payload it carries
// (probed before a check starts; zero: none), and its measurement.
type netnsRun struct {
	payload netnsbench.Payload
	measure func(ctx context.Context, ro RunOptions) (*netnsbench.Report, error)
}

var netnsKinds = map[string]netnsKind{
	"churn": {
		prepare: func(n *NetnsSpec) (netnsRun, error) {
			o, err := n.churn()
			if err == nil {
				err = o.Check()
			}
			return netnsRun{o.Payload, func(ctx context.Context, ro RunOptions) (*netnsbench.Report, error) {
				o.Counter = ro.Counter
				return withPayloads(func() (*netnsbench.Report, error) { return netnsbench.Churn(ctx, o) }, &o.Payload, o.ComparePayload)
			}}, err
		},
		count: func(n *NetnsSpec) int { return n.Workers * n.PerWorker },
		size: func(n *NetnsSpec) []string {
			return []string{"--workers", strconv.Itoa(n.Workers), "--per-worker", strconv.Itoa(n.PerWorker)}
		},
		rounds: true,
	},
	"sequential": {
		prepare: func(n *NetnsSpec) (netnsRun, error) {
			return netnsRun{measure: func(ctx context.Context, _ RunOptions) (*netnsbench.Report, error) {
				return netnsbench.Sequential(ctx, netnsbench.SequentialOptions{Count: n.Count, Profile: n.Profile})
			}}, netnsbench.CheckCount(n.Count, 1)
		},
		count: func(n *NetnsSpec) int { return n.Count },
		size:  func(n *NetnsSpec) []string { return []string{"--count", strconv.Itoa(n.Count)} },
	},
	"create": {
		prepare: func(n *NetnsSpec) (netnsRun, error) {
			o, err := n.create()
			if err == nil {
				err = o.Check()
			}
			return netnsRun{o.Payload, func(ctx context.Context, ro RunOptions) (*netnsbench.Report, error) {
				o.Counter, o.MountDir = ro.Counter, ro.MountDir
				return withPayloads(func() (*netnsbench.Report, error) { return netnsbench.Keep(ctx, o) }, &o.Payload, o.ComparePayload)
			}}, err
		},
		count:  func(n *NetnsSpec) int { return n.Count },
		size:   func(n *NetnsSpec) []string { return []string{"--count", strconv.Itoa(n.Count)} },
		rounds: true,
	},
}

// withPayloads runs measure with the payloads made ready first and released
// after (netnsbench.PrepareAll).
func withPayloads(measure func() (*netnsbench.Report, error), ps ...*netnsbench.Payload) (*netnsbench.Report, error) {
	release, err := netnsbench.PrepareAll(ps...)
	defer release()
	if err != nil {
		return nil, err
	}
	return measure()
}

// kind is n's scenario kind, or an error naming the valid ones.
func (n *NetnsSpec) kind() (netnsKind, error) {
	if k, ok := netnsKinds[n.Scenario]; ok {
		return k, nil
	}
	return netnsKind{}, fmt.Errorf("netns scenario %q: valid are %s", n.Scenario, strings.Join(slices.Sorted(maps.Keys(netnsKinds)), ", "))
}

// prepared is n's run, checked.
func (n *NetnsSpec) prepared() (netnsRun, error) {
	k, err := n.kind()
	if err != nil {
		return netnsRun{}, err
	}
	return k.prepare(n)
}
