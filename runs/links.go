package runs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// A record's links are written as runs, not one object per device: a run
// creates PREFIX0..PREFIX<n-1> on consecutive ifindexes, so 200 000 links
// are a few runs instead of 17 MB of JSON that every create, delete and
// cleanup would marshal or parse whole. Each element of the list is
//
//	[index, n, count]        count links: index+i named PREFIX<n+i>
//	[index, n, count, step]  the same with ifindexes step apart (a veth's
//	                         peer takes the index between two veths)
//	[index, "name"]          one link whose name is not PREFIX<decimal>
//
// Only the ifindex and the name are kept: they, the group and the prefix
// are what ownership rests on; the kernel is asked for the rest.

// maxRecordDevices bounds what a record may claim, links and lowers
// together and in every form, so that a planted record cannot make devbulk
// allocate without limit: the largest run devbulk makes, devices.MaxCount
// links and the lower devices they need.
var maxRecordDevices = func() int {
	lowers := 0
	for _, k := range devices.All() {
		lowers = max(lowers, k.LowersNeeded(devices.MaxCount))
	}
	return devices.MaxCount + lowers
}()

// encodeLinks writes links, named PREFIX infix <n>, as runs.
func encodeLinks(links []nlbatch.Link, prefix string) []any {
	out := []any{}
	var run []int64 // index, n, count, step of the open run
	for _, l := range links {
		n, ok := nameNumber(l.Name, prefix)
		if !ok {
			out, run = flush(out, run), nil
			out = append(out, []any{l.Index, l.Name})
			continue
		}
		if run != nil && grow(run, int64(l.Index), n) {
			continue
		}
		out, run = flush(out, run), []int64{int64(l.Index), n, 1, 1}
	}
	return flush(out, run)
}

// grow adds link (index, n) to run when it continues it: the next name,
// and the next ifindex by the run's step (set by its second link).
func grow(run []int64, index, n int64) bool {
	switch {
	case n != run[1]+run[2]:
		return false
	case run[2] == 1 && index > run[0]:
		run[3] = index - run[0]
	case index != run[0]+run[2]*run[3]:
		return false
	}
	run[2]++
	return true
}

func flush(out []any, run []int64) []any {
	switch {
	case run == nil:
		return out
	case run[3] == 1 || run[2] == 1:
		return append(out, run[:3])
	default:
		return append(out, run)
	}
}

// nameNumber is n when name is prefix followed by n in canonical decimal
// (no sign, no leading zero): only then does the number give the name back.
func nameNumber(name, prefix string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || (rest[0] == '0' && rest != "0") || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil
}

// decodeLinks reads a record's link list, at most budget links: runs as
// encodeLinks writes them, or, from devbulk before them, one object per
// link.
func decodeLinks(raw json.RawMessage, prefix string, budget int) ([]nlbatch.Link, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	if len(elems) > budget {
		return nil, errTooMany
	}
	if len(elems) > 0 && bytes.HasPrefix(bytes.TrimSpace(elems[0]), []byte("{")) {
		var old []nlbatch.Link
		return old, decodeStrict(raw, &old)
	}
	var out []nlbatch.Link
	for _, e := range elems {
		var err error
		if out, err = appendElem(out, e, prefix, budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errTooMany refuses a record that claims more devices than a run makes.
var errTooMany = fmt.Errorf("more devices than a run makes (at most %d links and lowers)", maxRecordDevices)

// appendElem appends the links of one element of a link list, out growing
// to at most budget.
func appendElem(out []nlbatch.Link, e json.RawMessage, prefix string, budget int) ([]nlbatch.Link, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(e, &parts); err != nil {
		return nil, fmt.Errorf("link list element %s: %w", e, err)
	}
	if len(parts) == 2 && bytes.HasPrefix(parts[1], []byte(`"`)) {
		var l nlbatch.Link
		if err := decodeStrict(parts[0], &l.Index); err != nil {
			return nil, fmt.Errorf("link list element %s: %w", e, err)
		}
		if err := decodeStrict(parts[1], &l.Name); err != nil {
			return nil, fmt.Errorf("link list element %s: %w", e, err)
		}
		if len(out) >= budget {
			return nil, errTooMany
		}
		return append(out, l), nil
	}
	var run []int64
	if err := decodeStrict(e, &run); err != nil || len(run) < 3 || len(run) > 4 {
		return nil, fmt.Errorf("link list element %s: want [index, n, count] or [index, n, count, step] or [index, \"name\"]", e)
	}
	if len(run) == 3 {
		run = append(run, 1)
	}
	index, n, count, step := run[0], run[1], run[2], run[3]
	if count < 1 || n < 0 || step < 1 || step > math.MaxInt32 || index < 1 || index > math.MaxInt32 ||
		index+(count-1)*step > math.MaxInt32 || n+count-1 < n {
		return nil, fmt.Errorf("link list element %s: out of range (ifindexes 1..%d)", e, math.MaxInt32)
	}
	if count > int64(budget-len(out)) {
		return nil, errTooMany
	}
	// One allocation for the links and one for their names (substrings of
	// one string): a run of 2000 read by appending, a name at a time, cost
	// a group delete ~500 KB of garbage, twice, and with it a collection
	// before its request.
	out = slices.Grow(out, int(count))
	names := runNames(prefix, n, count)
	for i := range count {
		end := len(prefix) + decimalLen(n+i)
		out = append(out, nlbatch.Link{Index: int32(index + i*step), Name: names[:end]})
		names = names[end:]
	}
	return out, nil
}

// runNames is the names PREFIX<n>..PREFIX<n+count-1>, one after the other,
// in one string.
func runNames(prefix string, n, count int64) string {
	b := make([]byte, 0, count*int64(len(prefix)+decimalLen(n+count-1)))
	for i := range count {
		b = strconv.AppendInt(append(b, prefix...), n+i, 10)
	}
	return string(b)
}

// decimalLen is the number of decimal digits of n >= 0.
func decimalLen(n int64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
