package inject

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
)

// TestMemoryOffSessionStartReadsNoMemory: with auto-memory switched off in
// config.json a session start lists and reads nothing of the memory
// directory — the facts its rendering depended on name nothing in it —
// and shows none of it; the hook front serves that rendering from the
// cache (its key is intermem-inject's). Switched back on, the next session
// start is handed over and shows the memory.
func TestMemoryOffSessionStartReadsNoMemory(t *testing.T) {
	dir, now, pr := benchProject(t)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	handed := 0
	run := func() string {
		t.Helper()
		payload := `{"session_id":"s","cwd":"` + pr.Root + `","hook_event_name":"SessionStart","source":"startup"}`
		var out bytes.Buffer
		vars := []string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + pr.MemoryDir, "INTERMEM_NOW=" + now.Format(time.RFC3339)}
		env := cli.New(vars, pr.Root, strings.NewReader(payload), &out, &bytes.Buffer{})
		startThroughFront(t, env, vars, pr.Root, self, &out, &handed)
		return out.String()
	}
	const memories = "Memories not loaded"
	if out := run(); handed != 1 || !strings.Contains(out, memories) {
		t.Fatalf("with auto-memory on: handed over %d times, want 1; output:\n%s", handed, out)
	}
	cfg := filepath.Join(pr.Root, ".intermem", config.Name)
	if err := os.WriteFile(cfg, []byte(`{"sources": {"auto-memory": false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	off := run()
	if handed != 2 || strings.Contains(off, memories) {
		t.Fatalf("switched off: handed over %d times, want 2; output:\n%s", handed, off)
	}
	b, err := os.ReadFile(filepath.Join(pr.Root, ".intermem", RenderCacheName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(pr.MemoryDir)) {
		t.Fatalf("switched off, the session start's rendering depends on the memory directory:\n%s", b)
	}
	if again := run(); handed != 2 || again != off {
		t.Fatalf("switched off, the next start was handed over (%d) or differs:\n%s", handed, again)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if on := run(); handed != 3 || !strings.Contains(on, memories) {
		t.Fatalf("switched back on: handed over %d times, want 3; output:\n%s", handed, on)
	}
}
