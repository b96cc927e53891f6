package vm

import (
	"fmt"
	"os"
	"path/filepath"
)

// A directory of builds, one subdirectory each in name order, holding
// bzImage (or one vmlinuz*) and, for modules, lib/modules/RELEASE.
var buildsList = &listSource{form: "DIR, a directory of builds (one subdirectory each, in name order)",
	accepts: func(arg string) bool {
		st, err := os.Stat(arg)
		return err == nil && st.IsDir()
	},
	list: buildsIn,
}

// buildsIn lists the kernels built into the subdirectories of dir, in
// name order: each one's bzImage (or vmlinuz*), with its lib/modules/REL
// when it has one. A subdirectory with no image, or several, is skipped.
func buildsIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, badSpec{fmt.Errorf("--kernels: %w", err)}
	}
	var specs []string
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		images, _ := filepath.Glob(filepath.Join(sub, "bzImage"))
		if more, _ := filepath.Glob(filepath.Join(sub, "vmlinuz*")); len(images) == 0 {
			images = more
		}
		if !e.IsDir() || len(images) != 1 {
			continue
		}
		spec := images[0]
		if mods, _ := filepath.Glob(filepath.Join(sub, "lib", "modules", "*")); len(mods) == 1 {
			spec += ":" + mods[0]
		}
		specs = append(specs, spec)
	}
	if len(specs) < 2 {
		return nil, badSpec{fmt.Errorf("--kernels %s: %d builds (subdirectories with one bzImage or vmlinuz*); a bisection needs at least two", dir, len(specs))}
	}
	return specs, nil
}
