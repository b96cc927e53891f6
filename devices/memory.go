package devices

import (
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/internal/kmem"
)

// ErrTooBig reports a run whose devices would not fit in the machine's
// memory.
var ErrTooBig = errors.New("refused, unless forced (--force)")

// KernelNeed is the kernel memory, in KiB, that count links of kind k
// hold, with the lower devices of kind lower they need.
func KernelNeed(k, lower *Kind, count int) float64 {
	need := k.KernelKiB * float64(count)
	if lower != nil {
		need += lower.KernelKiB * float64(k.LowersNeeded(count))
	}
	return need
}

// Fits fails, with an error that matches ErrTooBig, when count links of
// kind k (and their lower devices of kind lower) need more kernel memory
// than availableKiB (MemAvailable). The estimate is the kinds' KernelKiB:
// another kernel may differ.
func Fits(k, lower *Kind, count int, availableKiB int64) error {
	need := KernelNeed(k, lower, count)
	if need <= float64(availableKiB) {
		return nil
	}
	return fmt.Errorf("%d %s need about %s of kernel memory (%.0f KiB each); %s available (MemAvailable): %w",
		count, k.Name, gib(need), k.KernelKiB, gib(float64(availableKiB)), ErrTooBig)
}

// FitsNow is Fits against MemAvailable now; nil where /proc/meminfo
// cannot be read.
func FitsNow(k, lower *Kind, count int) error {
	mem, ok := kmem.Read()
	if !ok {
		return nil
	}
	return Fits(k, lower, count, mem.MemAvailable)
}

func gib(kib float64) string { return fmt.Sprintf("%.1f GiB", kib/(1<<20)) }
