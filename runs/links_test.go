package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/nlbatch"
)

func linksOf(prefix string, idx []int32, nums []int) []nlbatch.Link {
	out := make([]nlbatch.Link, len(idx))
	for i := range idx {
		out[i] = nlbatch.Link{Index: idx[i], Name: fmt.Sprintf("%s%d", prefix, nums[i])}
	}
	return out
}

// Links are written as runs and read back as they were: consecutive
// ifindexes, a veth's stride of two, gaps, out-of-order names, and names
// that are not PREFIX<canonical decimal>.
func TestLinksRoundTrip(t *testing.T) {
	odd := []nlbatch.Link{{Index: 9, Name: "dbk007"}, {Index: 10, Name: "dbk8"}, {Index: 11, Name: "eth0"}}
	cases := map[string]struct {
		links []nlbatch.Link
		want  string
	}{
		"consecutive": {linksOf("dbk", []int32{5, 6, 7, 8}, []int{0, 1, 2, 3}), `[[5,0,4]]`},
		"veth stride": {linksOf("dbk", []int32{5, 7, 9}, []int{0, 1, 2}), `[[5,0,3,2]]`},
		"gap":         {linksOf("dbk", []int32{5, 6, 9, 10}, []int{0, 1, 2, 3}), `[[5,0,2],[9,2,2]]`},
		"names out of order": {linksOf("dbk", []int32{5, 6, 7}, []int{2, 0, 1}),
			`[[5,2,1],[6,0,2]]`},
		"descending index": {linksOf("dbk", []int32{9, 8}, []int{0, 1}), `[[9,0,1],[8,1,1]]`},
		"not canonical":    {odd, `[[9,"dbk007"],[10,8,1],[11,"eth0"]]`},
		"none":             {nil, `[]`},
	}
	for what, c := range cases {
		b, err := json.Marshal(encodeLinks(c.links, "dbk"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s: written %s, want %s", what, b, c.want)
		}
		got, err := decodeLinks(b, "dbk", maxRecordDevices)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(got, c.links) && len(got)+len(c.links) > 0 {
			t.Errorf("%s: read back %v, want %v", what, got, c.links)
		}
	}
}

// A record file is the user's to plant: it must not make devbulk allocate
// without bound, nor claim ifindexes past the kernel's range.
func TestLinksRefuseWhatNoRunMakes(t *testing.T) {
	for _, raw := range []string{
		`[[1,0,1000246]]`, `[[1,0,2147483647]]`, `[[2147483647,0,2]]`, `[[5,0,2,0]]`, `[[0,0,1]]`,
		`[[5,-1,1]]`, `[[5,0,0]]`, `[[5,0]]`, `[[5,0,1,1,1]]`, `[[5,"dbk1",1]]`, `[["5","dbk1"]]`,
		`[[1,0,600000],[1,0,600000]]`, `[[1,0,3,4611686018427387904]]`, `[[9223372036854775807,0,1]]`,
		`[[1,9223372036854775807,2]]`, `{}`, `[5]`, `[{"Index":1,"Name":"dbk0","Evil":1}]`,
	} {
		if got, err := decodeLinks(json.RawMessage(raw), "dbk", maxRecordDevices); err == nil {
			t.Errorf("%s read as %d links", raw, len(got))
		}
	}
}

// A record of 200 000 links made in order is a few bytes, not 17 MB, and a
// record of devbulk before runs (one object per link) is still read.
func TestRecordOfManyLinksIsSmall(t *testing.T) {
	r := goodRecord()
	r.Links, r.Lowers = make([]nlbatch.Link, 200000), nil
	for i := range r.Links {
		r.Links[i] = nlbatch.Link{Index: int32(100 + i), Name: fmt.Sprintf("dbk%d", i), Kind: "ifb", Group: r.Group}
	}
	b := encode(t, r)
	if len(b) > 512 {
		t.Errorf("record of 200000 links is %d bytes: %.200s", len(b), b)
	}
	back, err := parse(r.FileName(), b)
	if err != nil || len(back.Links) != 200000 || back.Links[199999] != (nlbatch.Link{Index: 200099, Name: "dbk199999"}) {
		t.Fatalf("read back: %v", err)
	}
	old := strings.Replace(string(encode(t, goodRecord())), `"links":[[5,0,2]]`,
		`"links":[{"Index":5,"Name":"dbk0","Kind":"ifb"},{"Index":6,"Name":"dbk1"}]`, 1)
	if back, err := parse(r.FileName(), []byte(old)); err != nil || len(back.Links) != 2 || back.Links[0].Kind != "ifb" {
		t.Errorf("record with one object per link: %v %v (%s)", back, err, old)
	}
}

// The bound counts every form (runs, literal names, objects of the earlier
// form), and a record's links and lowers together.
func TestLinksBoundCountsEveryForm(t *testing.T) {
	for _, raw := range []string{`[[1,0,3]]`, `[[1,"a"],[2,"b"],[3,"c"]]`, `[{"Index":1,"Name":"dbk0"},{},{}]`, `[[1,0,2],[5,"x"]]`} {
		if got, err := decodeLinks(json.RawMessage(raw), "dbk", 2); !errors.Is(err, errTooMany) {
			t.Errorf("%s with a budget of 2: %d links, %v", raw, len(got), err)
		}
	}
	r := goodRecord()
	b := strings.Replace(string(encode(t, r)), `"lowers":[[7,0,1]]`, `"lowers":[[7,0,1]],"links":[[1,0,1000000]]`, 1)
	b = strings.Replace(b, `"links":[[5,0,2]],`, ``, 1)
	b = strings.Replace(b, `"lowers":[[7,0,1]]`, `"lowers":[[2000000,0,300]]`, 1)
	if _, err := parse(r.FileName(), []byte(b)); !errors.Is(err, errTooMany) {
		t.Errorf("1 000 000 links and 300 lowers read: %v (%s)", err, b)
	}
}
