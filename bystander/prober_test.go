package bystander

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock moves only when the prober sleeps or a test moves it (an
// operation taking time).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) add(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time, _ <-chan struct{}) bool {
	f.mu.Lock()
	if t.After(f.now) {
		f.now = t
	}
	f.mu.Unlock()
	return ctx.Err() == nil
}

// An operation stalled for 1 s at 100/s makes the ones due behind it late:
// they count the wait from when they were due (open loop), so about a
// hundred operations see latencies up to the stall, not one.
func TestStallMakesTheOnesBehindItLate(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	start := clk.now
	p := newProber(Config{Op: "link", Rate: 100}, clk)
	n := 0
	p.loop(func(context.Context) (int, error) {
		n++
		d := time.Millisecond
		if n == 50 {
			d = time.Second // due at 490 ms, answered at 1490 ms
		}
		clk.add(d)
		if n == 400 {
			p.cancel()
		}
		return 0, nil
	})
	st := p.Window(start, start.Add(4*time.Second))
	if st.Ops != 400 {
		t.Fatalf("%d operations, want 400", st.Ops)
	}
	if st.Max != int64(time.Second) || st.LongestStall != int64(time.Second) || st.StallBegan != int64(490*time.Millisecond) {
		t.Errorf("max %v, longest stall %v began %v", time.Duration(st.Max), time.Duration(st.LongestStall), time.Duration(st.StallBegan))
	}
	late := 0
	for _, s := range p.samples {
		if s.done.Sub(s.due) > 100*time.Millisecond {
			late++
		}
	}
	// The k-th (from 0) is due at 10k ms and, from the 50th on, answered
	// at 1490+(k-49) ms: late by 1441-9k ms, over 100 ms for k = 49..148.
	// A closed-loop prober would have seen one.
	if late != 100 {
		t.Errorf("%d operations late by over 100 ms, want 100", late)
	}
	if st.P99 < int64(900*time.Millisecond) {
		t.Errorf("p99 %v: the late ones did not count", time.Duration(st.P99))
	}
	idle := p.Window(start.Add(2*time.Second), start.Add(3*time.Second))
	if idle.Ops != 100 || idle.Max != int64(time.Millisecond) {
		t.Errorf("after the backlog: %d ops, max %v; want 100 at 1 ms", idle.Ops, time.Duration(idle.Max))
	}
}

// Errors and interrupted dumps are counted per window, the first error
// kept.
func TestWindowCountsErrorsAndInterruptions(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	start := clk.now
	p := newProber(Config{Op: "dump", Rate: 10}, clk)
	n := 0
	p.loop(func(context.Context) (int, error) {
		n++
		if n == 10 {
			p.cancel()
		}
		if n%3 == 0 {
			return 0, errors.New("file exists")
		}
		return 2, nil
	})
	st := p.Window(start, start.Add(time.Second))
	if st.Ops != 10 || st.Errors != 3 || st.Interrupted != 14 || !strings.Contains(st.FirstError, "file exists") {
		t.Errorf("%+v", st)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"link", "link@10", ""},
		{"getlink@250", "getlink@250", ""},
		{"nope", "", `unknown operation "nope" (valid: ` + strings.Join(Ops(), ", ") + ")"},
		{"link@0", "", "rate \"0\" out of range: 1..10000"},
		{"link@10001", "", "out of range: 1..10000"},
		{"link@fast", "", "out of range"},
		{"link@NaN", "", "out of range"},
		{"link@Inf", "", "out of range"},
	} {
		c2, err := Parse(c.in)
		if c.err != "" {
			if !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || c2.String() != c.want {
			t.Errorf("%s: %v, %v", c.in, c2, err)
		}
	}
}

// While paused nothing is issued, and nothing counts as due: the schedule
// starts again at Resume. Pause returns once the loop is parked, and a
// Window asked meanwhile does not wait for Resume.
func TestPauseStartsANewSchedule(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	start := clk.now
	p := newProber(Config{Op: "getlink", Rate: 10}, clk)
	n := 0
	atFifth, goOn := make(chan struct{}), make(chan struct{})
	go p.loop(func(context.Context) (int, error) {
		n++
		switch n {
		case 5: // at 400 ms: held until Pause has been asked
			close(atFifth)
			<-goOn
		case 10:
			p.cancel()
		}
		return 0, nil
	})
	<-atFifth
	paused := make(chan struct{})
	go func() { p.Pause(); close(paused) }()
	for !p.isPaused() {
		time.Sleep(time.Millisecond)
	}
	close(goOn)
	<-paused // the loop is parked: nothing in flight
	if st := p.Window(start, start.Add(time.Hour)); st.Ops != 5 {
		t.Errorf("while paused, a window holds %d operations, want the 5 done", st.Ops)
	}
	clk.add(10 * time.Second)
	p.Resume()
	<-p.done
	st := p.Window(start, start.Add(time.Hour))
	if st.Ops != 10 || st.Max != 0 {
		t.Errorf("%d operations, max latency %v: want 10, none late", st.Ops, time.Duration(st.Max))
	}
	if gap := p.samples[5].due.Sub(p.samples[4].due); gap < 10*time.Second {
		t.Errorf("the 6th was due %v after the 5th: the pause counted as due", gap)
	}
}

// A Pause that comes while the loop sleeps toward the next operation cuts
// the sleep short: that operation is not sent.
func TestPauseDuringTheSleep(t *testing.T) {
	p := newProber(Config{Op: "getlink", Rate: 2}, realClock{}) // every 500 ms
	issued := make(chan time.Time, 10)
	go p.loop(func(context.Context) (int, error) { issued <- time.Now(); return 0, nil })
	<-issued // the first, at once
	time.Sleep(50 * time.Millisecond)
	p.Pause()
	select {
	case <-issued:
		t.Error("an operation was sent after Pause returned")
	case <-time.After(time.Second):
	}
	p.cancel()
	p.Resume()
	<-p.done
}
