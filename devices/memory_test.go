package devices

import (
	"errors"
	"strings"
	"testing"
)

// A run that needs more kernel memory than is available is refused with
// one line that names the need and what is available; one that fits is
// not. Lower devices count too.
func TestFits(t *testing.T) {
	const avail = 9_500_000 // KiB: about 9.1 GiB
	err := Fits(Ifb, nil, 300000, avail)
	if !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "300000 ifb need about 12.0 GiB of kernel memory (42 KiB each); 9.1 GiB available") {
		t.Errorf("300000 ifb: %v", err)
	}
	if err := Fits(Ifb, nil, 200000, avail); err != nil {
		t.Errorf("200000 ifb in 9.1 GiB: %v", err)
	}
	if need := KernelNeed(Vlan, Dummy, 4095); need != 4095*Vlan.KernelKiB+2*Dummy.KernelKiB {
		t.Errorf("4095 vlans need %.0f KiB, want their own and two dummies'", need)
	}
	for _, k := range All() {
		if k.KernelKiB <= 0 {
			t.Errorf("%s has no KernelKiB", k.Name)
		}
	}
}
