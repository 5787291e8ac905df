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

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// status is what intermem knows about a project after some runs.
type status struct {
	ProjectRoot string
	MemoryDir   string
	Entries     int
	Sessions    map[string]store.Session // by session id, from the store
	// CLI is the raw `intermem status --json` output, when the CLI has
	// landed; then ProjectRoot, MemoryDir and Entries come from it.
	CLI map[string]json.RawMessage
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
// user: `intermem status --json --project dir` once the CLI has landed
// (cross-checked against the store), else the project package and the
// store directly.
func (u *user) observe(t *testing.T, dir string) status {
	t.Helper()
	var st status
	if cliPiece.landed() {
		st = u.statusCLI(t, dir)
	} else {
		p, err := project.Resolve(cli.New(u.environ(), dir, nil, nil, nil), dir)
		if err != nil {
			t.Fatalf("resolving the project of %s: %v", dir, err)
		}
		st.ProjectRoot, st.MemoryDir = p.Root, p.MemoryDir
		st.Entries = -1
	}
	sessions, entries, err := readStore(filepath.Join(st.ProjectRoot, project.StateDirName, "intermem.db"))
	if err != nil {
		t.Fatalf("reading the store of %s: %v", st.ProjectRoot, err)
	}
	st.Sessions = sessions
	if st.CLI == nil {
		st.Entries = entries
	} else if st.Entries != entries {
		t.Errorf("intermem status --json says %d entries, the store holds %d", st.Entries, entries)
	}
	if n, ok := st.number("sessions"); ok && n != len(sessions) {
		t.Errorf("intermem status --json says %d sessions, the store holds %d: %v", n, len(sessions), st.ids())
	}
	return st
}

// statusCLI runs `intermem status --json --project dir` with the user's
// environment.
func (u *user) statusCLI(t *testing.T, dir string) status {
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
	for key, dst := range map[string]*string{"project_root": &st.ProjectRoot, "memory_dir": &st.MemoryDir} {
		if err := json.Unmarshal(st.CLI[key], dst); err != nil || *dst == "" {
			t.Fatalf("intermem status --json: no %q string: %s", key, out)
		}
	}
	var ok bool
	if st.Entries, ok = st.number("entries"); !ok {
		t.Fatalf("intermem status --json: no %q number: %s", "entries", out)
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

// readStore returns the sessions and the number of entries in a store; a
// missing store has none.
func readStore(path string) (map[string]store.Session, int, error) {
	sessions := map[string]store.Session{}
	s, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNotExist) {
		return sessions, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	entries := 0
	err = s.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(store.BucketEntries); b != nil {
			entries = b.Stats().KeyN
		}
		return store.Each(tx, store.BucketSessions, func(id string, v *store.Session) error {
			sessions[id] = *v
			return nil
		})
	})
	return sessions, entries, err
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
