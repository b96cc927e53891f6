package check

import (
	"fmt"
	"time"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/vm"
)

// What a scenario costs, for a plan's estimate: per device, per
// namespace, per cycle, per boot. Rounded from the development machine's
// figures (2 vCPUs, 6.18, a shared VM; 2026-12-06): serial deletes 16-17
// ms a device, batched creates and deletes 0.05-0.2 ms, a churned
// namespace 0.3-0.7 ms, a TCG boot with devbulk about 12 s; perCycle,
// perPayload, perNetnsRun and inTCG are rough guesses. The quick suite
// plans to about 30 s, and took 22-32 s there when the machine was quiet.
// Estimate is a plan, not a measurement: the time left is rescaled as the
// run goes.
const (
	perDeviceBatch  = 150 * time.Microsecond // created pipelined, or deleted in one batch
	perDeviceSerial = 17 * time.Millisecond  // deleted one by one: RCU grace periods
	perCycle        = 150 * time.Millisecond // a throwaway namespace made, drained, the kernel's memory read
	perNamespace    = 700 * time.Microsecond // netns churn, create, sequential: made and released
	perPayload      = 2 * time.Millisecond   // a namespace's payload (a veth, a router), set up
	perNetnsRun     = 300 * time.Millisecond // a netns run's drain
	perBoot         = 15 * time.Second       // the VM booted under TCG, devbulk started in it
	inTCG           = 4                      // the VM's CPU-bound costs against the host's
)

// Estimate is about how long the scenario takes, here or (inVM) in a
// TCG guest; see the costs above.
func (sc ScenarioSpec) Estimate(inVM bool) time.Duration {
	var one time.Duration // one repetition
	switch {
	case sc.Bench != nil:
		one = sc.Bench.estimate()
	case sc.Netns != nil:
		one = sc.Netns.estimate()
	}
	if inVM {
		one *= inTCG
	}
	return one * time.Duration(sc.Repeat)
}

func (b *BenchSpec) estimate() time.Duration {
	n := time.Duration(b.Count)
	k, _ := devices.Lookup(b.Kind)
	var d time.Duration
	for _, s := range b.Delete {
		cycle := perCycle + n*perDeviceBatch // the create
		if st, err := batch.ParseDelete(s); err == nil && !st.OneBatch() || k != nil && k.WaitsPerDevice {
			cycle += n * perDeviceSerial
		} else {
			cycle += n * perDeviceBatch
		}
		d += cycle
	}
	if b.Profile {
		d *= 3 // function_graph
	}
	return d
}

func (n *NetnsSpec) estimate() time.Duration {
	count := n.Count
	if k, err := n.kind(); err == nil {
		count = k.count(n)
	}
	per := perNamespace
	if n.Payload != "" || n.Veth || n.ExecStep != "" {
		per += perPayload
	}
	d := perNetnsRun + time.Duration(count)*per
	if n.Profile {
		d *= 3
	}
	return d
}

// Plan is what a run of the suite does and about how long it takes:
// Here the scenarios on this kernel, InVM those that need the VM (one
// boot), and their estimates.
type Plan struct {
	Here, InVM       []ScenarioSpec
	HereTime, VMTime time.Duration
	SkippedVM        int // vm scenarios that will not run (no --vm)
	SkippedVMTime    time.Duration
}

// PlanRun splits s as Run would with o.
func PlanRun(s *Suite, o RunOptions) Plan {
	var p Plan
	for _, sc := range s.Scenarios {
		if !runsInVM(sc, o) {
			p.Here = append(p.Here, sc)
			p.HereTime += sc.Estimate(vm.IsGuest()) // a fleet's guest, under TCG
			continue
		}
		if o.VM == nil && !o.AllInVM {
			p.SkippedVM++
			p.SkippedVMTime += sc.Estimate(true)
			continue
		}
		p.InVM = append(p.InVM, sc)
		p.VMTime += sc.Estimate(true)
	}
	if len(p.InVM) > 0 {
		p.VMTime += perBoot
	}
	if p.SkippedVM > 0 {
		p.SkippedVMTime += perBoot
	}
	return p
}

// Total is the plan's estimate.
func (p Plan) Total() time.Duration { return p.HereTime + p.VMTime }

// countdown says, before each scenario run here, which it is and about
// how long the run has left: the plan's estimate of what remains, scaled
// by how the scenarios done so far compared with theirs.
type countdown struct {
	plan      Plan
	k         int
	start     time.Time
	estimated time.Duration // of the scenarios begun
	remaining time.Duration
}

func newCountdown(p Plan) *countdown {
	return &countdown{plan: p, start: time.Now(), remaining: p.Total()}
}

func (c *countdown) next(sc ScenarioSpec, progress func(string)) {
	scale := 1.0
	if c.estimated > 0 {
		scale = min(max(float64(time.Since(c.start))/float64(c.estimated), 0.5), 3)
	}
	c.k++
	if progress != nil {
		left := time.Duration(float64(c.remaining) * scale)
		progress(fmt.Sprintf("scenario %d of %d here: %s (about %s left)", c.k, len(c.plan.Here), sc.Name, Rough(left)))
	}
	e := sc.Estimate(vm.IsGuest())
	c.estimated += e
	c.remaining -= e
}

// Rough writes an estimate as people say one: "40 s", "3 min".
func Rough(d time.Duration) string {
	if d < 100*time.Second {
		return fmt.Sprintf("%d s", max(int(d.Round(5*time.Second)/time.Second), 5))
	}
	return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
}

// Say is the plan in one line, for before the run: what runs where, and
// about how long it takes.
func (p Plan) Say(suite string) string {
	s := fmt.Sprintf("the %s suite: ", suite)
	if len(p.Here) > 0 {
		s += fmt.Sprintf("%d scenarios on this kernel", len(p.Here))
		if len(p.InVM) > 0 {
			s += " and "
		}
	}
	if len(p.InVM) > 0 {
		s += fmt.Sprintf("%d in a VM (one boot, TCG or KVM)", len(p.InVM))
	}
	s += ", about " + Rough(p.Total())
	if p.SkippedVM > 0 {
		s += fmt.Sprintf("; %d vm scenarios skipped (--vm runs them: about %s more)", p.SkippedVM, Rough(p.SkippedVMTime))
	}
	return s
}

// EstimateMatrix is about how long a kernel matrix of s takes: every
// scenario in the VM on each of kernels, booted rounds times each.
func EstimateMatrix(s *Suite, kernels, rounds int) time.Duration {
	p := PlanRun(s, RunOptions{AllInVM: true})
	return time.Duration(kernels) * (p.VMTime + time.Duration(rounds-1)*perBoot)
}
