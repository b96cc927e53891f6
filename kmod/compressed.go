package kmod

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxModuleSize bounds a decompressed module: the largest in Debian's
// kernels are a few tens of MB, and a corrupt or hostile file must not make
// devbulk allocate without end.
const maxModuleSize = 256 << 20

// compression is the suffix of a compressed module file (".xz", ".zst",
// ".gz"), "" for a plain .ko, and ok false for a file that is no module.
func compression(file string) (suffix string, ok bool) {
	for _, s := range []string{"", ".xz", ".zst", ".gz"} {
		if strings.HasSuffix(file, ".ko"+s) {
			return s, true
		}
	}
	return "", false
}

// readModule reads a module file, decompressing .ko.xz, .ko.zst and .ko.gz
// (the forms depmod and CONFIG_MODULE_COMPRESS_* know) in this process.
func readModule(path string) ([]byte, error) {
	suffix, ok := compression(path)
	if !ok {
		return nil, fmt.Errorf("%s: not a kernel module file (.ko, .ko.xz, .ko.zst, .ko.gz)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch suffix {
	case ".xz":
		if r, err = xz.NewReader(f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	case ".zst":
		d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxModuleSize))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer d.Close()
		r = d
	case ".gz":
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(r, maxModuleSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n > maxModuleSize {
		return nil, fmt.Errorf("%s: more than %d MiB decompressed: not a module", path, maxModuleSize>>20)
	}
	return b.Bytes(), nil
}
