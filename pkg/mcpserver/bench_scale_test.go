package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/inject/benchgen"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/store"
)

// scaleQueries are what a model asks memory_search, cycled through: words
// the generator writes, two to four at a time.
var scaleQueries = []string{
	"invoice render retry", "cache timeout deadline", "vat currency cents", "golden test race",
	"session token budget", "migration schema index", "deploy staging release", "journal snapshot spool lock",
}

// BenchmarkSearch20k measures memory_search on the project of the
// ~20,000-entry scale row of scripts/bench.sh (pkg/inject/benchgen: 9,600
// memory facts and 300 one-memory files, 2,500 solution documents, 2,500
// learnings, 2,000 interfluence edits, two 1,500-line curated documents),
// its catalog and index stored as a writer leaves them: through the SDK's
// client over the in-memory transport, and through a real intermem-mcp
// process (built as scripts/build.sh builds it) over its stdin and
// stdout. Each call is one query of scaleQueries; the median and p95 per
// call are reported, and the load average before and after.
//
//	go test -run '^$' -bench Search20k -benchtime 200x ./pkg/mcpserver
func BenchmarkSearch20k(b *testing.B) {
	dir := b.TempDir()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	gen, err := benchgen.Write(dir, benchgen.Options{IndexLines: 260, FactFiles: 100, FactsEach: 96, MemoryFiles: 300,
		DocLines: 1500, Solutions: 2500, Learnings: 2500, Edits: 2000, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		b.Fatal(err)
	}
	vars := []string{"HOME=" + home, "INTERMEM_MEMORY_DIR=" + gen.MemoryDir, "INTERMEM_NOW=" + now.Format(time.RFC3339)}
	env := cli.New(vars, gen.Root, strings.NewReader(""), io.Discard, io.Discard)
	p, err := project.Resolve(env, gen.Root)
	if err != nil {
		b.Fatal(err)
	}
	entries := settleScale(b, env, p, now)
	b.Logf("the project: %d entries generated, %d in the stored catalog", gen.Entries, entries)

	b.Run("in-memory", func(b *testing.B) {
		cs := connect(b, NewCatalog(env, p), Options{Now: env.Now})
		load := loadavg()
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			began := time.Now()
			text, isErr := call(b, cs, "memory_search", map[string]any{"query": scaleQueries[i%len(scaleQueries)]})
			times = append(times, time.Since(began))
			if isErr || !strings.Contains(text, `"results":[{`) {
				b.Fatalf("memory_search %q: %s", scaleQueries[i%len(scaleQueries)], text)
			}
		}
		b.StopTimer()
		reportCalls(b, "in-memory transport", times, load)
	})

	b.Run("process", func(b *testing.B) {
		bin := filepath.Join(b.TempDir(), "intermem-mcp")
		build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "../../cmd/intermem-mcp")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		cmd := exec.Command(bin, "--project", gen.Root)
		cmd.Env = vars
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			stdin.Close()
			cmd.Wait()
		}()
		r := bufio.NewReaderSize(stdout, 1<<20)
		send := func(msg string) {
			if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
				b.Fatal(err)
			}
		}
		recv := func() string {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("reading the server: %v", err)
			}
			return line
		}
		send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		recv()
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		load := loadavg()
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			q, _ := json.Marshal(scaleQueries[i%len(scaleQueries)])
			began := time.Now()
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":%s}}}`, i+1, q))
			line := recv()
			times = append(times, time.Since(began))
			if !strings.Contains(line, fmt.Sprintf(`"id":%d`, i+1)) || !strings.Contains(line, `\"results\":[{`) {
				b.Fatalf("memory_search %s: %.300s", q, line)
			}
		}
		b.StopTimer()
		reportCalls(b, "intermem-mcp process", times, load)
	})
}

// settleScale stores the catalog and its search index as a writer does
// (files older than catalog.RacyWindow, as a while after they were
// written) and returns how many entries it holds.
func settleScale(b *testing.B, env *cli.Env, p *project.Project, now time.Time) int {
	settled := time.Now().Add(-time.Hour)
	for _, dir := range []string{p.Root, p.MemoryDir} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || strings.Contains(path, string(filepath.Separator)+".intermem"+string(filepath.Separator)) {
				return err
			}
			// Directories too: the catalog trusts a directory's stat, as a
			// file's, only once it is past the racy window.
			return os.Chtimes(path, settled, settled)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := p.EnsureStateDir(); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(p.Path("intermem.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := 0
	err = st.Update(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: catalog.SourceEnv(p, env), Now: now})
		if err != nil {
			return err
		}
		n = len(c.Entries())
		return c.Settle()
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// reportCalls reports the median and p95 of times, and says them with the
// load average before and after when verbose.
func reportCalls(b *testing.B, what string, times []time.Duration, before string) {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50, p95 := times[len(times)/2], times[len(times)*95/100]
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p95), "p95-ms")
	b.Logf("memory_search through the %s over %d calls: p50 %.2f ms, p95 %.2f ms, max %.2f ms; load average %s before, %s after (%d CPUs)",
		what, len(times), ms(p50), ms(p95), ms(times[len(times)-1]), before, loadavg(), runtime.NumCPU())
}

// loadavg is the 1-, 5- and 15-minute load averages (/proc/loadavg).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "unknown"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
