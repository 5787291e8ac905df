package mcpserver

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/store"
)

// BenchmarkStart measures what a session waits for: from exec of the
// stripped static binary (built as scripts/build.sh builds it) to the
// initialize response on its stdout, in the test project. It reports
// the median and p95 besides the mean.
//
//	go test -run '^$' -bench Start -benchtime 200x ./pkg/mcpserver
func BenchmarkStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "intermem-mcp")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "../../cmd/intermem-mcp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	f := newFixture(b)
	initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n")
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(bin, "--project", f.root)
		cmd.Env = []string{"HOME=" + f.home, "INTERMEM_MEMORY_DIR=" + f.mem}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		began := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write(initialize); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		times = append(times, time.Since(began))
		if err != nil || len(line) < 20 {
			b.Fatalf("no initialize response: %q %v", line, err)
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*95/100]), "p95-ms")
	if testing.Verbose() {
		fmt.Printf("exec to initialize response over %d runs: p50 %.2f ms, p95 %.2f ms, max %.2f ms\n",
			len(times), ms(times[len(times)/2]), ms(times[len(times)*95/100]), ms(times[len(times)-1]))
	}
}

// BenchmarkSearchCall measures one memory_search through the SDK client
// on the test project (six solution documents, five learnings, an edit
// log, 62 auto-memory entries) with no catalog stored yet: every call
// parses, redacts, screens and indexes every file in memory.
func BenchmarkSearchCall(b *testing.B) {
	f := newFixture(b)
	cs := connect(b, NewCatalog(f.env, f.p), Options{Now: f.env.Now})
	args := map[string]any{"query": "widget calibration"}
	b.ResetTimer()
	for range b.N {
		call(b, cs, "memory_search", args)
	}
}

// BenchmarkSearchCallStored is BenchmarkSearchCall once a writer (the
// Stop hook, a write command) has stored the catalog and its index: a
// call then costs a stat per file, the instruction files' discovery and
// the index decoded in place, not a parse of every file.
func BenchmarkSearchCallStored(b *testing.B) {
	f := newFixture(b)
	settled := time.Now().Add(-time.Hour) // older than catalog.RacyWindow
	for _, dir := range []string{f.root, f.mem} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return os.Chtimes(p, settled, settled)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := f.p.EnsureStateDir(); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(f.p.Path("intermem.db"), store.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	now, _ := f.env.Now()
	err = st.Update(func(tx *bolt.Tx) error {
		c, err := catalog.Build(store.Catalog(tx), catalog.Config{Env: catalog.SourceEnv(f.p, f.env), Now: now})
		if err != nil {
			return err
		}
		_, err = c.Index()
		return err
	})
	st.Close()
	if err != nil {
		b.Fatal(err)
	}
	cs := connect(b, NewCatalog(f.env, f.p), Options{Now: f.env.Now})
	args := map[string]any{"query": "widget calibration"}
	b.ResetTimer()
	for range b.N {
		call(b, cs, "memory_search", args)
	}
}
