package workdir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/devbulk/devbulk/internal/owner"
)

// Cleanup removes a dead owner's directory (after its hook), and leaves a
// live owner's, one without an owner file, one others can write, and names
// MkdirTemp does not make.
func TestCleanupRemovesOnlyDeadOwners(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	live, err := Make("devbulk-test-")
	if err != nil {
		t.Fatal(err)
	}
	dead := mkdir(t, tmp, "devbulk-test-123", 0o700)
	o := owner.Self()
	o.PID = 1 << 22 // above pid_max's default: no process has it
	b, _ := json.Marshal(o)
	os.WriteFile(filepath.Join(dead, ownerFile), b, 0o600)
	ownerless := mkdir(t, tmp, "devbulk-test-456", 0o700)
	open := mkdir(t, tmp, "devbulk-test-789", 0o777)
	os.WriteFile(filepath.Join(open, ownerFile), b, 0o600)
	named := mkdir(t, tmp, "devbulk-test-x1", 0o700)
	os.WriteFile(filepath.Join(named, ownerFile), b, 0o600)

	if l := Live("devbulk-test-"); len(l) != 1 || l[0] != live {
		t.Errorf("Live: %v, want [%s]", l, live)
	}
	var hooked []string
	done, err := Cleanup("devbulk-test-", func(dir string) error { hooked = append(hooked, dir); return nil })
	if err != nil || len(done) != 1 || done[0] != dead || len(hooked) != 1 || hooked[0] != dead {
		t.Fatalf("Cleanup: %v, removed %v, hooked %v; want only %s", err, done, hooked, dead)
	}
	for _, d := range []string{live, ownerless, open, named} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}

func mkdir(t *testing.T, parent, name string, mode os.FileMode) string {
	t.Helper()
	d := filepath.Join(parent, name)
	if err := os.Mkdir(d, mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, mode) // past the umask
	return d
}
