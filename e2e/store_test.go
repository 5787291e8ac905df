package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// status is what intermem knows about a project after some runs: the
// output of `intermem status --json`, and the sessions in its store.
type status struct {
	ProjectRoot string
	MemoryDir   string
	Store       string
	Entries     int
	Sessions    map[string]store.Session // by session id, read from Store
	CLI         map[string]json.RawMessage
}

// ids returns the session ids in the store, sorted.
func (s status) ids() []string {
	var ids []string
	for id := range s.Sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// observe reads intermem's view of the project containing dir, as the
// user: `intermem status --json --project dir`, and the sessions in the
// store it names (their ended flags are not in the status output), which
// must be as many as the status output counts.
func (u *user) observe(t *testing.T, dir string) status {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, "bin", "intermem"), "status", "--json", "--project", dir)
	cmd.Env = u.environ()
	cmd.Dir = u.home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("intermem status --json --project %s: %v\n%s%s", dir, err, out, stderr.String())
	}
	var st status
	if err := json.Unmarshal(out, &st.CLI); err != nil {
		t.Fatalf("intermem status --json printed something that is not a JSON object: %v\n%s", err, out)
	}
	for key, dst := range map[string]*string{"project_root": &st.ProjectRoot, "memory_dir": &st.MemoryDir, "store": &st.Store} {
		if err := json.Unmarshal(st.CLI[key], dst); err != nil || *dst == "" {
			t.Fatalf("intermem status --json: no %q string: %s", key, out)
		}
	}
	var ok bool
	if st.Entries, ok = st.number("entries"); !ok {
		t.Fatalf("intermem status --json: no %q number: %s", "entries", out)
	}
	if st.Sessions, err = readSessions(st.Store); err != nil {
		t.Fatalf("reading the store %s: %v", st.Store, err)
	}
	if n, ok := st.number("sessions"); !ok || n != len(st.Sessions) {
		t.Errorf("intermem status --json counts %s sessions, the store holds %d: %v", st.CLI["sessions"], len(st.Sessions), st.ids())
	}
	return st
}

// number returns a numeric field of the CLI's status output.
func (s status) number(key string) (int, bool) {
	raw, ok := s.CLI[key]
	if !ok {
		return 0, false
	}
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}

// readSessions returns the sessions in a store; a missing store has none.
func readSessions(path string) (map[string]store.Session, error) {
	sessions := map[string]store.Session{}
	s, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNotExist) {
		return sessions, nil
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	err = s.View(func(tx *bolt.Tx) error {
		return store.Each(tx, store.BucketSessions, func(id string, v *store.Session) error {
			sessions[id] = *v
			return nil
		})
	})
	return sessions, err
}

// requireStore fails the test unless the project's store exists.
func requireStore(t *testing.T, root string) {
	t.Helper()
	db := filepath.Join(root, project.StateDirName, "intermem.db")
	if _, err := os.Stat(db); err != nil {
		var log string
		if b, err := os.ReadFile(filepath.Join(root, project.StateDirName, "log")); err == nil {
			log = "\n--- .intermem/log:\n" + tail(string(b), 2000)
		}
		t.Fatalf("no store at %s: the hooks did not record anything (%v)%s", db, err, log)
	}
}

// memoryDirs lists the auto-memory directories under a Claude Code
// configuration directory: <config>/projects/*/memory.
func memoryDirs(t *testing.T, config string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(config, "projects", "*", "memory"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// writeFile writes a file, creating its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mkdir creates a directory and its parents and returns it.
func mkdir(t *testing.T, elem ...string) string {
	t.Helper()
	d := filepath.Join(elem...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}
