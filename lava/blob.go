package lava

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/check"
)

// blobPrefix starts each console line of an encoded results document.
const blobPrefix = "devbulk-results "

// blobWidth is the base64 characters per line: short lines, which a
// console and LAVA's log keep whole.
const blobWidth = 96

// EncodeResults writes a results document as console lines: gzip, base64,
// and each line "devbulk-results K/N CHUNK", so that a reader finds every
// part, in order, among whatever else the console shows; gzip's checksum
// catches a line the console mangled.
func EncodeResults(w io.Writer, r *check.Results) error {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	s := base64.StdEncoding.EncodeToString(z.Bytes())
	n := (len(s) + blobWidth - 1) / blobWidth
	for k := 0; k < n; k++ {
		chunk := s[k*blobWidth : min(len(s), (k+1)*blobWidth)]
		if _, err := fmt.Fprintf(w, "%s%d/%d %s\n", blobPrefix, k+1, n, chunk); err != nil {
			return err
		}
	}
	return nil
}

// blob gathers the lines of an encoded document.
type blob struct {
	parts []string
	seen  int
}

// add takes a console line; lines that are not part of a document are
// ignored. A second document (a job that ran the check twice) starts over.
func (b *blob) add(line string) error {
	i := strings.Index(line, blobPrefix)
	if i < 0 {
		return nil
	}
	f := strings.Fields(line[i+len(blobPrefix):])
	if len(f) != 2 {
		return fmt.Errorf("a results line is cut: %q", line)
	}
	ks, ns, ok := strings.Cut(f[0], "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || k < 1 || n < 1 || k > n || n > 1<<20 {
		return fmt.Errorf("a results line is cut: %q", line)
	}
	if k == 1 || len(b.parts) != n {
		b.parts, b.seen = make([]string, n), 0
	}
	if b.parts[k-1] == "" {
		b.seen++
	}
	b.parts[k-1] = f[1]
	return nil
}

// results decodes the document; nil, nil when there was none.
func (b *blob) results() (*check.Results, error) {
	if b.parts == nil {
		return nil, nil
	}
	if b.seen != len(b.parts) {
		return nil, fmt.Errorf("the results document printed in the guest is incomplete: %d of %d lines", b.seen, len(b.parts))
	}
	z, err := base64.StdEncoding.DecodeString(strings.Join(b.parts, ""))
	if err != nil {
		return nil, fmt.Errorf("the results document printed in the guest: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("the results document printed in the guest: %w", err)
	}
	js, err := io.ReadAll(zr) // to the end: gzip checks its CRC there
	if err != nil {
		return nil, fmt.Errorf("the results document printed in the guest: %w", err)
	}
	r, err := check.ReadResults(bytes.NewReader(js))
	if err != nil {
		return nil, fmt.Errorf("the results document printed in the guest: %w", err)
	}
	return r, nil
}
