package batch

import (
	"strings"
	"testing"
	"time"
)

// A phase that spent most of its wall time off devbulk's CPU says so (the
// create that took 15.65 s for 22.6 ms of its own work); one that did
// not, or a namespace release, does not.
func TestWaitNote(t *testing.T) {
	ms := func(n float64) int64 { return int64(n * float64(time.Millisecond)) }
	for _, c := range []struct {
		p    Phase
		want string
	}{
		{Phase{WallNS: ms(15650), UserNS: ms(2.6), SysNS: ms(20)}, "15.6s of its 15.7s waiting off devbulk's CPU (22.6ms on it)"},
		{Phase{WallNS: ms(300), UserNS: ms(100), SysNS: ms(150)}, ""}, // mostly devbulk's work
		{Phase{WallNS: ms(90), UserNS: ms(1), SysNS: ms(1)}, ""},      // too short to say
		{Phase{WallNS: ms(5000), DrainMethod: "x", SysNS: ms(1)}, ""}, // the kernel worker's time
	} {
		if got := c.p.WaitNote(); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
