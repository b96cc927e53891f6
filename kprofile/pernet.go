package kprofile

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Netns is the set for namespace teardown: the cleanup worker, its RCU
// waits and device unregistering, and the pernet handlers (see
// PernetHandlers).
func Netns(handlers []string) Set {
	return Set{
		Roots: []string{"cleanup_net"},
		Functions: append([]string{"synchronize_rcu", "synchronize_rcu_expedited", "rcu_barrier",
			"unregister_netdevice_many_notify", "unregister_netdevice_many", "netdev_run_todo", "rtnl_lock"}, handlers...),
	}
}

// Offsets in struct pernet_operations (x86_64; the same in 6.1 and 6.12):
// list 0, init 16, pre_exit 24, exit 32, exit_batch 40, and from 6.10 on
// exit_batch_rtnl 48 (where 6.1 has the id pointer, which names no
// function).
var handlerOffsets = []uint64{24, 32, 40, 48}

// maxPernetOps bounds the walk of the kernel's list (about a hundred are
// registered; a list that does not come back is not walked for ever).
const maxPernetOps = 4096

// PernetHandlers names the pernet exit handlers (pre_exit, exit,
// exit_batch, exit_batch_rtnl) of every registered struct
// pernet_operations, in the order of the kernel's pernet_list, which
// cleanup_net walks backwards. The handlers are reached through pointers and
// the list differs between kernels and with the modules loaded, so it is
// read, not written down: the list's address comes from /proc/kallsyms, and
// the list itself from /proc/kcore (read only), each entry's pointers named
// by kallsyms. (Debian's 6.12 inlines the per-ops helpers of cleanup_net,
// so no trace point sees one ops at a time.)
func PernetHandlers() ([]string, error) {
	ks, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer ks.Close()
	syms, err := readKallsyms(ks)
	if err != nil {
		return nil, fmt.Errorf("%w: /proc/kallsyms: %w", ErrUnavailable, err)
	}
	head, ok := syms.data["pernet_list"]
	if !ok || head == 0 {
		return nil, fmt.Errorf("%w: no pernet_list in /proc/kallsyms (CONFIG_KALLSYMS_ALL, or kptr_restrict)", ErrUnavailable)
	}
	core, err := openKcore()
	if err != nil {
		return nil, fmt.Errorf("%w: /proc/kcore: %w", ErrUnavailable, err)
	}
	defer core.Close()
	ptrs, err := pernetPointers(core, head)
	if err != nil {
		return nil, fmt.Errorf("%w: walking pernet_list: %w", ErrUnavailable, err)
	}
	out := syms.handlerNames(ptrs)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no pernet handler named", ErrUnavailable)
	}
	return out, nil
}

// handlerNames names the pointers that are functions, each once, in order.
func (ks kallsyms) handlerNames(ptrs []uint64) []string {
	var out []string
	for _, p := range ptrs {
		if n := ks.text[p]; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// memory reads 8-byte words of kernel memory at virtual addresses.
type memory interface {
	word(va uint64) (uint64, error)
}

// pernetPointers walks the list at head (struct list_head {next, prev};
// each entry is a struct pernet_operations, its list first) and returns
// the handler slots of every entry, zeros left out.
func pernetPointers(m memory, head uint64) ([]uint64, error) {
	var out []uint64
	next, err := m.word(head)
	for n := 0; err == nil && next != head; n++ {
		if n == maxPernetOps || next == 0 {
			return nil, fmt.Errorf("the list does not come back to its head after %d entries", n)
		}
		for _, off := range handlerOffsets {
			p, werr := m.word(next + off)
			if werr != nil {
				return nil, werr
			}
			if p != 0 {
				out = append(out, p)
			}
		}
		next, err = m.word(next)
	}
	return out, err
}

// kallsyms is what devbulk needs of /proc/kallsyms: functions by address,
// data by name.
type kallsyms struct {
	text map[uint64]string
	data map[string]uint64
}

func readKallsyms(r io.Reader) (kallsyms, error) {
	ks := kallsyms{text: map[uint64]string{}, data: map[string]uint64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		switch f[1] {
		case "t", "T":
			if _, dup := ks.text[a]; !dup {
				ks.text[a] = f[2]
			}
		case "d", "D", "b", "B":
			ks.data[f[2]] = a
		}
	}
	return ks, sc.Err()
}

// kcore reads kernel memory through /proc/kcore, an ELF core file whose
// PT_LOAD segments map the kernel's virtual addresses.
type kcore struct {
	f     *os.File
	progs []*elf.Prog
}

func openKcore() (*kcore, error) {
	f, err := os.Open("/proc/kcore")
	if err != nil {
		return nil, err
	}
	e, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	k := &kcore{f: f}
	for _, p := range e.Progs {
		if p.Type == elf.PT_LOAD {
			k.progs = append(k.progs, p)
		}
	}
	return k, nil
}

func (k *kcore) word(va uint64) (uint64, error) {
	for _, p := range k.progs {
		if va >= p.Vaddr && va+8 <= p.Vaddr+p.Memsz {
			var b [8]byte
			if _, err := k.f.ReadAt(b[:], int64(p.Off+va-p.Vaddr)); err != nil {
				return 0, err
			}
			return binary.LittleEndian.Uint64(b[:]), nil
		}
	}
	return 0, errors.New("address " + strconv.FormatUint(va, 16) + " is in no segment of /proc/kcore")
}

func (k *kcore) Close() error { return k.f.Close() }
