package vm

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DebianRange is every Debian kernel image package from good to bad, both
// included, in version order, from apt's lists: the packages that differ
// from good and bad only in the number where they differ
// (linux-image-6.1.0-47-cloud-amd64 … -57-cloud-amd64, or
// linux-image-6.12.117+deb12-cloud-amd64 … 118+deb12-…). good and bad are
// packages or point releases (debian:6.1.0-47, debian:6.12.117). It refuses
// ends of different series or flavours, equal ends, and a bad end older
// than the good one.
func DebianRange(good, bad string) ([]string, error) {
	g, b := packageOf(good), packageOf(bad)
	prefix, suffix, gn, bn, err := numberBetween(g, b)
	if err != nil {
		return nil, badSpec{fmt.Errorf("--good %s and --bad %s: %w", good, bad, err)}
	}
	if gn == bn {
		return nil, badSpec{fmt.Errorf("--good %s and --bad %s are the same kernel", good, bad)}
	}
	if gn > bn {
		return nil, badSpec{fmt.Errorf("--good %s is not older than --bad %s", good, bad)}
	}
	out, err := run("", "apt-cache", "pkgnames", prefix)
	if err != nil {
		return nil, fmt.Errorf("apt's lists (run apt-get update?): %w", err)
	}
	same := regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + `(\d+)` + regexp.QuoteMeta(suffix) + "$")
	var nums []int
	for _, name := range strings.Fields(out) {
		if m := same.FindStringSubmatch(name); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n >= gn && n <= bn {
				nums = append(nums, n)
			}
		}
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	if len(nums) == 0 || nums[0] != gn || nums[len(nums)-1] != bn {
		return nil, badSpec{fmt.Errorf("apt's lists do not hold both %s and %s (run apt-get update?)", g, b)}
	}
	pkgs := make([]string, len(nums))
	for i, n := range nums {
		pkgs[i] = prefix + strconv.Itoa(n) + suffix
	}
	return pkgs, nil
}

// packageOf is the image package a Debian name stands for without asking
// apt: a point release's, or the name itself.
func packageOf(name string) string {
	if pkg, ok := debianPoint(name); ok {
		return pkg
	}
	return name
}

// numberBetween splits two package names into what they share around the
// one number where they differ, and that number in each.
func numberBetween(a, b string) (prefix, suffix string, an, bn int, err error) {
	if !strings.HasPrefix(a, "linux-image-") || !strings.HasPrefix(b, "linux-image-") {
		return "", "", 0, 0, fmt.Errorf("want two Debian kernels (debian:6.1.0-47, or linux-image-... packages)")
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && isDigit(a[p-1]) {
		p--
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && isDigit(a[len(a)-s]) {
		s--
	}
	an, aerr := strconv.Atoi(a[p : len(a)-s])
	bn, berr := strconv.Atoi(b[p : len(b)-s])
	if aerr != nil || berr != nil {
		return "", "", 0, 0, fmt.Errorf("%s and %s differ in more than one number: not one series and flavour", a, b)
	}
	return a[:p], a[len(a)-s:], an, bn, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
