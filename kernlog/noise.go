package kernlog

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Noise is the list of complaints not reported: a regular expression a
// line, matched against a finding's first line; '#' begins a comment. A
// list read from a file is never nil, even when empty.
type Noise []*regexp.Regexp

// DefaultNoise is devbulk's own list (noise.txt, in docs/findings.md too):
// what the kernel prints in devbulk's runs that is no defect.
//
//go:embed noise.txt
var DefaultNoise string

// ParseNoise reads a noise list; a pattern that is not a regular
// expression is an error naming its line.
func ParseNoise(r io.Reader, name string) (Noise, error) {
	n := Noise{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not a regular expression: %v", name, line, s, err)
		}
		n = append(n, re)
	}
	return n, sc.Err()
}

// ReadNoise reads the noise list in file path; "" is DefaultNoise.
func ReadNoise(path string) (Noise, error) {
	if path == "" {
		return ParseNoise(strings.NewReader(DefaultNoise), "noise.txt")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseNoise(f, path)
}

// filters says whether f is noise.
func (n Noise) filters(f Finding) bool {
	for _, re := range n {
		if re.MatchString(f.Title()) {
			return true
		}
	}
	return false
}

// String is the list as ParseNoise reads it.
func (n Noise) String() string {
	var b strings.Builder
	for _, re := range n {
		b.WriteString(re.String() + "\n")
	}
	return b.String()
}
