package kmod

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/devbulk/devbulk/internal/child"
)

// maxModuleSize bounds a decompressed module: the largest in Debian's
// kernels are a few tens of MB, and a corrupt or hostile file must not make
// devbulk allocate without end. (A variable: its test decompresses a
// smaller bound's worth, not 256 MiB under the race detector.)
var maxModuleSize int64 = 256 << 20

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

// decompressors are the programs that decompress .ko.xz and .ko.zst to
// stdout from stdin, with their arguments, and the Debian packages that
// have them. They run as programs rather than as Go
// libraries because those libraries' package initialisation (CRC tables)
// would be paid at every start of devbulk, for modules that the kernel
// decompresses itself since 5.17 (CONFIG_MODULE_DECOMPRESS). xz's
// arguments are also busybox's (a VM guest has its xz applet). gzip is
// decompressed here, by the standard library.
var decompressors = map[string]struct {
	program string
	args    []string
	pkg     string
}{
	".xz":  {"xz", []string{"-dc"}, "xz-utils"},
	".zst": {"zstd", []string{"-dc"}, "zstd"},
}

// readModule reads a module file, decompressing .ko.xz, .ko.zst and .ko.gz
// (the forms depmod and CONFIG_MODULE_COMPRESS_* know).
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
	if d, ok := decompressors[suffix]; ok {
		return decompressWith(f, d.program, d.args, d.pkg)
	}
	var r io.Reader = f
	if suffix == ".gz" {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	return readBounded(path, r)
}

// decompressWith runs program on f (its stdin: a symlinked module file is
// read as any other, and no path is an argument) and reads what it
// writes, at most maxModuleSize; the program is killed at that bound (and
// with devbulk).
func decompressWith(f *os.File, program string, args []string, pkg string) ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := child.Command(ctx, program, args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = f, &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("%s: decompressing it needs %s (Debian package %s)", f.Name(), program, pkg)
		}
		return nil, err
	}
	b, err := readBounded(f.Name(), out)
	if err != nil {
		cancel() // past the bound, the program is still writing
		cmd.Wait()
		return nil, err
	}
	if werr := cmd.Wait(); werr != nil {
		return nil, fmt.Errorf("%s: %s %s: %v: %s", f.Name(), program, strings.Join(args, " "), werr, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// readBounded reads r to its end, refusing more than maxModuleSize.
func readBounded(path string, r io.Reader) ([]byte, error) {
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
