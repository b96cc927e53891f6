package lava

import (
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/vm"
)

// JobOptions describe a job: the kernel it boots, where its artifacts
// are, and the check it runs.
type JobOptions struct {
	Kernel *vm.Kernel
	// URL is where the artifacts are served: file:///DIR, or a fleet's
	// https://... directory.
	URL string
	// Suite names the suite (in the job's name); Baseline says whether the
	// ramdisk holds one; ThresholdPct is the check's --threshold.
	Suite        string
	Baseline     bool
	ThresholdPct float64
	// MemMiB is the guest memory the job asks the device for.
	MemMiB int
}

// The artifacts' names in their directory, and the guest's paths of what
// the ramdisk adds.
const (
	KernelFile   = "vmlinuz"
	RamdiskFile  = "ramdisk.cpio.gz"
	GuestSuite   = "/devbulk/suite.json"
	GuestBase    = "/devbulk/baseline.json"
	promptRegexp = "/ #"
)

// Job writes the job definition: a header comment that says what made it,
// then YAML for a plain device_type qemu device (the device decides KVM or
// TCG), deploying the kernel and the ramdisk to tmpfs, booting them with
// the qemu method and running the check as the test definition "devbulk".
func Job(w io.Writer, o JobOptions) error {
	url := strings.TrimSuffix(o.URL, "/")
	appendArgs := "console=ttyS0,115200 panic=-1"
	if o.Kernel.Package != "" {
		appendArgs += " " + devbulk.PackageParam + "=" + o.Kernel.Package
	}
	if o.Kernel.Append != "" {
		appendArgs += " " + o.Kernel.Append
	}
	step := "devbulk check --here --format lava --suite " + GuestSuite + " --label " + shellQuote(o.Kernel.Label()) +
		fmt.Sprintf(" --threshold %g%%", o.ThresholdPct)
	if o.Baseline {
		step += " --baseline " + GuestBase
	}
	// LAVA runs the steps under set -e: a check that ran (pass 0, fail 1,
	// skip 4: its cases say which) ends the step well; bad input or a
	// crash fails the definition. Both $? are devbulk's: the shell expands
	// them before test runs.
	step += " || test $? -eq 1 -o $? -eq 4"
	mins := func(m int) map[string]int { return map[string]int{"minutes": m} }
	job := jobDoc{
		DeviceType: "qemu",
		JobName:    fmt.Sprintf("devbulk check %s on %s", o.Suite, o.Kernel.Label()),
		Timeouts:   map[string]map[string]int{"job": mins(90), "action": mins(80), "connection": mins(2)},
		Visibility: "public",
		Priority:   "medium",
		Context:    map[string]any{"arch": "amd64", "memory": o.MemMiB},
		Metadata: map[string]string{"devbulk.version": devbulk.Version(), "devbulk.kernel": o.Kernel.Label(),
			"devbulk.suite": o.Suite, "devbulk.package": o.Kernel.Package},
		Actions: []map[string]any{
			{"deploy": map[string]any{
				"to": "tmpfs", "os": "oe", "timeout": mins(15),
				"images": map[string]any{
					"kernel": map[string]any{"url": url + "/" + KernelFile, "image_arg": "-kernel {kernel} -append \"" + appendArgs + "\""},
					"rootfs": map[string]any{"url": url + "/" + RamdiskFile, "image_arg": "-initrd {rootfs}",
						"compression": "gz", "format": "cpio.newc", "overlays": map[string]any{"lava": true}},
				},
			}},
			{"boot": map[string]any{"method": "qemu", "media": "tmpfs", "prompts": []string{promptRegexp}, "timeout": mins(10)}},
			{"test": map[string]any{
				"timeout": mins(75),
				"definitions": []map[string]any{{
					"from": "inline", "name": Definition, "path": "inline/" + Definition + ".yaml",
					"repository": map[string]any{
						"metadata": map[string]string{"format": "Lava-Test Test Definition 1.0", "name": Definition,
							"description": "devbulk check: bulk netdev and netns teardown, each scenario a case with its figure"},
						"run": map[string]any{"steps": []string{step}},
					},
				}},
			}},
		},
	}
	if _, err := fmt.Fprintf(w, "# devbulk %s: the suite %s on %s, every scenario a LAVA test case.\n# Made by devbulk lava job; it reads its artifacts from %s.\n", devbulk.Version(), o.Suite, o.Kernel.Describe(), url); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return err
	}
	return enc.Close()
}

// jobDoc is a LAVA job definition, its keys in the order LAVA's own
// examples have them.
type jobDoc struct {
	DeviceType string                    `yaml:"device_type"`
	JobName    string                    `yaml:"job_name"`
	Timeouts   map[string]map[string]int `yaml:"timeouts"`
	Visibility string                    `yaml:"visibility"`
	Priority   string                    `yaml:"priority"`
	Context    map[string]any            `yaml:"context"`
	Metadata   map[string]string         `yaml:"metadata"`
	Actions    []map[string]any          `yaml:"actions"`
}

// shellQuote quotes s for the guest's sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
