package lava

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/internal/workdir"
	"github.com/devbulk/devbulk/vm"
)

// JobFile is a job definition devbulk lava job wrote.
type JobFile struct {
	// Path is the job file's.
	Path string
	// Kernel is the image the job deploys, when it is a local file
	// (file://): a probe boot under KVM uses it.
	Kernel string
}

// ErrNotDevbulk marks a job file that is not one devbulk wrote.
var ErrNotDevbulk = errors.New("not a job devbulk lava job wrote")

// ReadJob reads and checks a job file: YAML, devbulk's metadata, and the
// devbulk test definition.
func ReadJob(path string) (*JobFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		DeviceType string            `yaml:"device_type"`
		Metadata   map[string]string `yaml:"metadata"`
		Actions    []struct {
			Deploy *struct {
				Images map[string]struct {
					URL string `yaml:"url"`
				} `yaml:"images"`
			} `yaml:"deploy"`
			Test *struct {
				Definitions []struct {
					Name string `yaml:"name"`
				} `yaml:"definitions"`
			} `yaml:"test"`
		} `yaml:"actions"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrNotDevbulk, yamlWhy(err, "a LAVA job definition"))
	}
	if doc.Metadata["devbulk.version"] == "" || doc.DeviceType != "qemu" {
		return nil, fmt.Errorf("%s: %w (no devbulk.version in its metadata, or not for device_type qemu)", path, ErrNotDevbulk)
	}
	j := &JobFile{Path: path}
	tested := false
	for _, a := range doc.Actions {
		if a.Deploy != nil {
			if u, err := url.Parse(a.Deploy.Images["kernel"].URL); err == nil && u.Scheme == "file" {
				j.Kernel = u.Path
			}
		}
		if a.Test != nil {
			for _, d := range a.Test.Definitions {
				tested = tested || d.Name == Definition
			}
		}
	}
	if !tested {
		return nil, fmt.Errorf("%s: %w (no %q test definition)", path, ErrNotDevbulk, Definition)
	}
	return j, nil
}

// RunOptions tune RunJob.
type RunOptions struct {
	// Accel is kvm, tcg, or "" for KVM when a probe boot works.
	Accel string
	// MemMiB is the device's memory: a device decides it, whatever the
	// job's context asks.
	MemMiB int
	// LogPath keeps lava-run's log there (created, never replaced); ""
	// keeps it only while the job runs.
	LogPath string
	// Progress, when set, receives a line per step.
	Progress func(string)
}

// ErrNoLAVA reports that lava-run is not installed (it matches
// devbulk.ErrNotSupported).
var ErrNoLAVA = devbulk.NotSupported("lava-run not found (apt-get install --no-install-recommends lava-dispatcher)")

// lavaRun is LAVA's dispatcher. It imports Debian's python3-guestfs at
// load time: it runs with Debian's python3, whatever python3 is first on
// PATH.
const (
	lavaRun = "/usr/bin/lava-run"
	python3 = "/usr/bin/python3"
	lavaTmp = "/var/lib/lava/dispatcher/tmp"
)

// RunJob runs the job here with lava-run, on a qemu device dictionary
// devbulk writes (WriteDevice), and reads its log. A job LAVA did not
// complete, or whose devbulk definition did not finish, is an error with
// the log's errors.
func RunJob(ctx context.Context, j *JobFile, o RunOptions) (*Run, error) {
	if _, err := os.Stat(lavaRun); err != nil {
		return nil, ErrNoLAVA
	}
	work, err := workdir.Make(workDirPattern)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	accel := o.Accel
	if accel == "" {
		accel = "tcg"
		if j.Kernel != "" {
			accel = vm.ProbeAccel(ctx, vm.Config{Kernel: &vm.Kernel{Name: j.Kernel, Vmlinuz: j.Kernel}})
		}
	}
	var device bytes.Buffer
	if err := WriteDevice(&device, accel, o.MemMiB); err != nil {
		return nil, err
	}
	devicePath := filepath.Join(work, "qemu.yaml") // work is this run's own: 0700, new
	if err := os.WriteFile(devicePath, device.Bytes(), 0o600); err != nil {
		return nil, err
	}
	id, err := claimJobID(work)
	if err != nil {
		return nil, err
	}
	jobDir := filepath.Join(lavaTmp, id)
	defer os.RemoveAll(jobDir)
	logPath := o.LogPath
	if logPath == "" {
		logPath = filepath.Join(work, "lava.log")
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	if o.Progress != nil {
		o.Progress(fmt.Sprintf("lava-run: job %s on a qemu device (%s, %d MiB); log %s", id, accel, o.MemMiB, logPath))
	}
	var out bytes.Buffer
	cmd := child.Command(ctx, python3, lavaRun, "--device", devicePath, "--job-id", id, "--output-dir", filepath.Join(work, "out"), j.Path)
	cmd.Stdout, cmd.Stderr = &out, logFile
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	run, err := Read(bytes.NewReader(b))
	var ee *exec.ExitError
	switch {
	case runErr != nil && !errors.As(runErr, &ee):
		return nil, runErr
	case errors.Is(err, ErrNotLAVA):
		return nil, fmt.Errorf("lava-run: the job reported no devbulk case%s", logErrors(b, out.String()))
	case err != nil:
		return nil, err
	case run.Job != Pass:
		return nil, fmt.Errorf("lava-run: the job ended %q%s", run.Job, logErrors(b, out.String()))
	case run.Finished == Fail || run.CheckResult() == "":
		return nil, fmt.Errorf("lava-run: devbulk's test definition did not finish (no %s case, or LAVA marked its run failed)%s", CheckCase, logErrors(b, out.String()))
	}
	return run, nil
}

// jobIDPrefix starts the ids devbulk gives lava-run's jobs: a LAVA
// server's are numbers, so a worker's jobs never share one.
const jobIDPrefix = "devbulk-"

// claimJobID picks the id of lava-run's job: devbulk-PID-K, whose
// directory lava-run makes in lavaTmp; none exists yet, and this process
// is the only live one of its pid. It is written into the work directory
// before lava-run starts: a devbulk killed meanwhile leaves it for devbulk
// cleanup (CleanupWorkDirs).
func claimJobID(work string) (string, error) {
	for k := 0; k < 100; k++ {
		id := fmt.Sprintf("%s%d-%d", jobIDPrefix, os.Getpid(), k)
		_, err := os.Lstat(filepath.Join(lavaTmp, id))
		switch {
		case err == nil:
			continue // a killed devbulk of the same pid left it: cleanup's
		case !errors.Is(err, os.ErrNotExist):
			return "", err
		}
		return id, os.WriteFile(filepath.Join(work, jobIDFile), []byte(id), 0o600)
	}
	return "", fmt.Errorf("%s holds 100 jobs named for process %d: devbulk cleanup removes them", lavaTmp, os.Getpid())
}

// The work directory of a run (device dictionary, the log when not kept,
// lava-run's output directory) and the file in it naming lava-run's job.
const (
	workDirPattern = "devbulk-lava-"
	jobIDFile      = "job-id"
)

// CleanupWorkDirs removes what devbulk lava runs that were killed left: their
// work directories, and the job directories lava-run made for them (and
// leaves when it is killed too).
func CleanupWorkDirs() ([]string, error) {
	// A running devbulk that got the pid of a killed one may use the id
	// the killed one's lava-run never made a directory for: such an id is
	// left.
	live := map[string]bool{}
	for _, dir := range workdir.Live(workDirPattern) {
		if id, err := jobID(dir); err == nil {
			live[id] = true
		}
	}
	return workdir.Cleanup(workDirPattern, func(dir string) error {
		id, err := jobID(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil // killed before lava-run started
		case err != nil:
			return err
		case live[id]:
			return nil
		}
		return os.RemoveAll(filepath.Join(lavaTmp, id))
	})
}

// jobID reads the lava-run job id a work directory names: devbulk's form
// only (claimJobID), never a path.
func jobID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, jobIDFile))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if !jobIDForm().MatchString(id) {
		return "", fmt.Errorf("%s: %q is not a job id devbulk gives", dir, id)
	}
	return id, nil
}

var jobIDForm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + jobIDPrefix + `[0-9]+-[0-9]+$`) })

// logErrors is the log's error events and lava-run's own output, on one
// line.
func logErrors(log []byte, out string) string {
	var errs []string
	for _, line := range strings.Split(string(log), "\n") {
		var l logLine
		if !strings.Contains(line, `"lvl": "error"`) || yaml.Unmarshal([]byte(strings.TrimPrefix(line, "- ")), &l) != nil {
			continue
		}
		var msg string
		if l.Msg.Decode(&msg) == nil {
			errs = append(errs, msg)
		}
	}
	if len(errs) > 3 {
		errs = errs[len(errs)-3:]
	}
	if o := strings.Join(strings.Fields(out), " "); o != "" {
		errs = append(errs, "lava-run: "+o)
	}
	if len(errs) == 0 {
		return ""
	}
	return ": " + strings.Join(errs, "; ")
}

// CheckResult is the result of the check as a whole (CheckCase), "" when
// the job did not report it.
func (r *Run) CheckResult() string {
	for _, c := range r.Cases {
		if c.Name == CheckCase {
			return c.Result
		}
	}
	return ""
}

// WriteTable prints the cases, one a line, the samples left out (they
// are the scenario's measurement's values).
func (r *Run) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tresult\tmeasurement\tunits")
	samples := 0
	for _, c := range r.Cases {
		if _, ok := sampleScenario(c.Name); ok {
			samples++
			continue
		}
		m := ""
		if c.Measurement != nil {
			m = formatMeasurement(*c.Measurement)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Result, m, c.Units)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "job %s; %d sample cases (SCENARIO.N) not shown\n", r.Job, samples)
	return err
}
