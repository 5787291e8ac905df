package proof

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writtenID is a written memory's id as the format defines it, computed
// here independently of package written: the first 16 hex digits of
// SHA-256("written" NUL type NUL title NUL content).
func writtenID(typ, title, content string) string {
	sum := sha256.Sum256([]byte("written\x00" + typ + "\x00" + title + "\x00" + content))
	return hex.EncodeToString(sum[:8])
}

// TestConcurrentWrites runs 8 writers at once — 4 `intermem write`
// processes and 4 `intermem-mcp` servers, each called through the MCP
// client over its stdin and stdout — while a storm of Stop hooks fires,
// and accounts for every write: each distinct memory is in
// .intermem/written.jsonl exactly once, under the id its content gives;
// each writer's shared memory (the same text from all 8) is stored once
// and every writer is answered with its id; a write that found the lock
// busy past its wait says so and is retried, never half-done; every hook
// exits 0 with no output, and every session the storm reported is
// counted once. INTERMEM_PROOF_WRITES sets the writes per writer.
func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	perWriter := envInt(t, "INTERMEM_PROOF_WRITES", 5)
	const cliWriters, mcpWriters, stormStreams = 4, 4, 2
	f := newFixture(t, map[string]string{"go.mod": "module example.com/p\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- Run make test before pushing.\n- The CI image pins Go 1.26.\n",
	})
	f.must("intermem", "status") // the state directory and the per-user key's home

	type write struct{ typ, title, content string }
	shared := write{"decision", "One store", "The project keeps one bbolt store per checkout."}
	plan := map[string][]write{}
	for w := 0; w < cliWriters+mcpWriters; w++ {
		name := fmt.Sprintf("w%d", w)
		for i := 0; i < perWriter; i++ {
			plan[name] = append(plan[name], write{"insight", fmt.Sprintf("Fact %d of %s", i, name), fmt.Sprintf("Writer %s learned fact number %d.", name, i)})
		}
		plan[name] = append(plan[name], shared)
	}

	var (
		mu      sync.Mutex
		got     = map[string][]string{} // writer → ids answered
		busy    int
		wg      sync.WaitGroup
		done    = make(chan struct{})
		hooks   int
		storm   sync.WaitGroup
		stormMu sync.Mutex
	)
	// busyText: the writer lock (journal.ErrBusy) or the store was held
	// past the writer's wait; the write did nothing and is retried.
	busyText := func(s string) bool {
		return strings.Contains(s, "busy") || strings.Contains(s, "another intermem command is changing this project")
	}
	record := func(name, id string) {
		mu.Lock()
		got[name] = append(got[name], id)
		mu.Unlock()
	}

	// The storm: Stop hooks of distinct sessions, back to back, until the
	// writers are done.
	for s := 0; s < stormStreams; s++ {
		storm.Add(1)
		go func(s int) {
			defer storm.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				session := fmt.Sprintf("5707a%03d-0000-4000-8000-%012d", s, n)
				r := f.run(payload(t, "Stop.2.1.197.json", session, f.root), nil, "intermem-snapshot")
				if r.code != 0 || r.stdout != "" {
					t.Errorf("Stop hook: exit %d, stdout %q", r.code, r.stdout)
				}
				stormMu.Lock()
				hooks++
				stormMu.Unlock()
			}
		}(s)
	}

	for w := 0; w < cliWriters; w++ {
		name := fmt.Sprintf("w%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range plan[name] {
				for try := 0; ; try++ {
					r := f.run("", nil, "intermem", "write", "--json", "--type", m.typ, "--title", m.title, "--content", m.content, "--source", name)
					if r.code == 1 && busyText(r.stderr) && try < 20 {
						mu.Lock()
						busy++
						mu.Unlock()
						continue
					}
					if r.code != 0 {
						t.Errorf("%s: intermem write: exit %d\n%s", name, r.code, r.stderr)
						break
					}
					var out struct{ ID string }
					if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
						t.Errorf("%s: %v: %s", name, err, r.stdout)
					}
					record(name, out.ID)
					break
				}
			}
		}()
	}
	for w := cliWriters; w < cliWriters+mcpWriters; w++ {
		name := fmt.Sprintf("w%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(filepath.Join(binDir, "intermem-mcp"))
			cmd.Dir = f.root
			cmd.Env = f.env("CLAUDE_PROJECT_DIR=" + f.root)
			// The server writes stderr from its own goroutine while this
			// one reads it: a locked buffer.
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "proof", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Errorf("%s: connect: %v", name, err)
				return
			}
			defer cs.Close()
			for _, m := range plan[name] {
				for try := 0; ; try++ {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_write", Arguments: map[string]any{
						"type": m.typ, "title": m.title, "content": m.content, "source": name}})
					if err != nil {
						t.Errorf("%s: memory_write: protocol error %v", name, err)
						return
					}
					text := res.Content[0].(*mcp.TextContent).Text
					if res.IsError && busyText(text) && try < 20 {
						mu.Lock()
						busy++
						mu.Unlock()
						continue
					}
					if res.IsError {
						t.Errorf("%s: memory_write: %s", name, text)
						break
					}
					var out struct{ ID string }
					if err := json.Unmarshal([]byte(text), &out); err != nil {
						t.Errorf("%s: %v: %s", name, err, text)
					}
					record(name, out.ID)
					break
				}
			}
			if out := stderr.String(); out != "" {
				t.Errorf("%s: intermem-mcp wrote to stderr: %s", name, out)
			}
		}()
	}
	wg.Wait()
	close(done)
	storm.Wait()

	// Every writer was answered with the id its content gives, in order.
	want := map[string]bool{}
	for _, ms := range plan {
		for _, m := range ms {
			want[writtenID(m.typ, m.title, m.content)] = true
		}
	}
	for name, ms := range plan {
		if len(got[name]) != len(ms) {
			t.Errorf("%s: %d answers for %d writes", name, len(got[name]), len(ms))
			continue
		}
		for i, m := range ms {
			id := writtenID(m.typ, m.title, m.content)
			if got[name][i] != id {
				t.Errorf("%s: write %d answered %s, want %s", name, i, got[name][i], id)
			}
		}
	}
	// The log holds each memory exactly once, and nothing else.
	b, err := os.ReadFile(filepath.Join(f.root, ".intermem", "written.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	seen := map[string]int{}
	for _, l := range lines {
		var r struct{ ID, Type, Title, Content string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Errorf("a line of written.jsonl is not a record: %q", l)
			continue
		}
		if id := writtenID(r.Type, r.Title, r.Content); id != r.ID || !want[id] {
			t.Errorf("written.jsonl holds %s, which no writer wrote", r.ID)
		}
		seen[r.ID]++
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("memory %s is in written.jsonl %d times, want once", id, seen[id])
		}
	}
	// The next writer ingests what the storm spooled; every session is
	// counted once.
	f.must("intermem", "write", "--type", shared.typ, "--title", shared.title, "--content", shared.content)
	var st struct{ Sessions int }
	decodeJSON(t, "status --json", f.must("intermem", "status", "--json").stdout, &st)
	if st.Sessions != hooks {
		t.Errorf("status counts %d sessions; the storm reported %d", st.Sessions, hooks)
	}
	t.Logf("%d writers (%d CLI, %d MCP), %d writes, %d distinct memories stored once each, %d busy retries; %d Stop hooks, %d sessions counted",
		cliWriters+mcpWriters, cliWriters, mcpWriters, len(plan)*(perWriter+1), len(want), busy, hooks, st.Sessions)
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
