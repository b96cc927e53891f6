package devices

import (
	"slices"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
)

// FreeVNIs skips every range that holds a VNI in use, and starts where the
// seed says, so that two runs of one namespace get different VNIs.
func TestFreeVNIs(t *testing.T) {
	used := map[uint32]bool{}
	for v := uint32(1); v <= 100; v++ {
		used[v] = true
	}
	used[150] = true
	for _, c := range []struct {
		count int
		seed  uint32
		want  uint32
	}{
		{10, 0, 101},   // past 1..100
		{60, 0, 151},   // 101..160 holds 150
		{10, 200, 201}, // the seed's start is free
		{10, 145, 151}, // 146..155 holds 150
	} {
		got, err := FreeVNIs(c.count, c.seed, used)
		if err != nil || got != c.want {
			t.Errorf("FreeVNIs(%d, %d) = %d, %v; want %d", c.count, c.seed, got, err, c.want)
		}
	}
	// The last range ends at the last VNI; past it, the search wraps
	// around to the first free range.
	if got, err := FreeVNIs(10, maxVNI-10, used); err != nil || got != maxVNI-9 {
		t.Errorf("at the top: %d, %v; want %d", got, err, maxVNI-9)
	}
	used[maxVNI] = true
	if got, err := FreeVNIs(10, maxVNI-10, used); err != nil || got != 101 {
		t.Errorf("wrapped: %d, %v; want 101", got, err)
	}
	if _, err := FreeVNIs(maxVNI, 0, used); err == nil {
		t.Error("a range as large as every VNI was found free beside VNIs in use")
	}
	if _, err := (Vxlan).Plan(Options{Count: 10, Prefix: "v", VNIBase: maxVNI - 5}); err == nil {
		t.Error("a plan past the last VNI was accepted")
	}
}

// A vxlan's VNI and lower device are read back from its IFLA_INFO_DATA by
// the parser this package registers with nlbatch.
func TestVxlanInfoDataParsed(t *testing.T) {
	links, err := Vxlan.Plan(Options{Count: 1, Prefix: "v", VNIBase: 4242})
	if err != nil {
		t.Fatal(err)
	}
	msg := links[0].Message()
	l, err := nlbatch.ParseLink(msg)
	if err != nil || l.Kind != "vxlan" || l.Data != (VxlanData{VNI: 4242}) {
		t.Fatalf("%+v, %v; want VNI 4242", l, err)
	}
	// The same data with IFLA_VXLAN_LINK added.
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("vxlan"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(nl.IFLA_VXLAN_LINK, nl.Uint32Attr(7))
	msg = append(msg[:unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg:unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg], info.Serialize()...)
	if l, err = nlbatch.ParseLink(msg); err != nil || l.Data != (VxlanData{Link: 7}) || slices.Index(l.Lowers(), 7) < 0 {
		t.Errorf("%+v, %v; want VxlanLink 7", l, err)
	}
}

// A vxlan's data whose last attribute is unpadded and fills it is read
// without a panic (the kernel pads; a fuzzer or another sender need not).
func TestVxlanInfoDataUnpadded(t *testing.T) {
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("vxlan"))
	info.AddRtAttr(nl.IFLA_INFO_DATA, []byte{5, 0, nl.IFLA_VXLAN_ID, 0, 42})
	links, _ := Vxlan.Plan(Options{Count: 1, Prefix: "v"})
	head := links[0].Message()[:unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg]
	if _, err := nlbatch.ParseLink(append(head, info.Serialize()...)); err != nil {
		t.Fatal(err)
	}
}
