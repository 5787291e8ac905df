// Command bench times intermem's hook binaries exec-to-exit and prints one
// table. scripts/bench.sh builds the binaries and runs it; it is not meant
// to be run on its own.
//
// Each row is a binary, its arguments, its stdin and its environment, run
// many times after a few warm-up runs; the table gives the median (p50) and
// 95th percentile (p95) wall time of fork+exec+exit as seen by this
// process, which is what Claude Code waits for. The floor row is a static
// Go binary that does nothing: no hook can be faster. To add a row (the
// snapshot hook, synthesize plan, other scales), append to rows in main.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/inject/benchgen"
)

type row struct {
	name   string
	bin    string
	args   []string
	stdin  []byte
	env    []string
	before func() // run before each timed run, untimed
}

type result struct {
	row      row
	p50, p95 time.Duration
	min      time.Duration
	cpu50    time.Duration // median user+system CPU time of the child
	out      int           // bytes of stdout of the last run
}

func main() {
	bin := flag.String("bin", "", "directory holding the built binaries and the floor binary")
	work := flag.String("work", "", "scratch directory (created)")
	runs := flag.Int("runs", 300, "timed runs per row")
	demo := flag.String("demo", "testdata/demo", "the demo project and memory")
	flag.Parse()
	if *bin == "" || *work == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: bench -bin DIR -work DIR [-runs N]")
		os.Exit(2)
	}
	if err := run(*bin, *work, *demo, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bin, work, demo string, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	now := time.Now().UTC()
	big, err := benchgen.Write(filepath.Join(work, "k1"), benchgen.Options{Now: now})
	if err != nil {
		return fmt.Errorf("generate project: %w", err)
	}
	demoProj := filepath.Join(work, "demo")
	if err := copyTree(filepath.Join(demo, "project"), demoProj); err != nil {
		return fmt.Errorf("copy demo: %w", err)
	}
	demoMem, err := filepath.Abs(filepath.Join(demo, "memory"))
	if err != nil {
		return err
	}
	baseEnv := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	payload := func(cwd string) []byte {
		b, _ := json.Marshal(map[string]string{
			"session_id": "42d98da9-b0e8-412c-9577-fa32f4125807", "cwd": cwd,
			"hook_event_name": "SessionStart", "source": "startup",
			"transcript_path": filepath.Join(home, ".claude", "projects", "x", "42d98da9.jsonl"),
		})
		return append(b, '\n')
	}
	injectEnv := func(mem string) []string { return append([]string{"INTERMEM_MEMORY_DIR=" + mem}, baseEnv...) }
	bigIndex := filepath.Join(big.Root, ".intermem", inject.IndexName)

	rows := []row{
		{name: "floor: static do-nothing binary", bin: "floor", stdin: payload(big.Root), env: baseEnv},
		{name: fmt.Sprintf("intermem-inject, %d entries", big.Entries), bin: "intermem-inject", stdin: payload(big.Root), env: injectEnv(big.MemoryDir)},
		{name: fmt.Sprintf("intermem-inject, %d entries, cold index", big.Entries), bin: "intermem-inject", stdin: payload(big.Root), env: injectEnv(big.MemoryDir),
			before: func() { os.Remove(bigIndex) }},
		{name: "intermem-inject, demo project", bin: "intermem-inject", stdin: payload(demoProj), env: injectEnv(demoMem)},
	}

	var results []result
	for _, r := range rows {
		res, err := measure(bin, r, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		results = append(results, res)
	}
	fmt.Printf("exec-to-exit wall time, %d runs per row after 10 warm-up runs (cpu: the child's user+system time, p50)\n\n", runs)
	fmt.Printf("%-44s %9s %9s %9s %9s %9s\n", "row", "p50", "p95", "min", "cpu", "stdout")
	for _, r := range results {
		fmt.Printf("%-44s %9s %9s %9s %9s %8dB\n", r.row.name, ms(r.p50), ms(r.p95), ms(r.min), ms(r.cpu50), r.out)
	}
	fmt.Printf("\nbinary sizes\n\n")
	ents, err := os.ReadDir(bin)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			fmt.Printf("%-44s %9.2f MB\n", e.Name(), float64(fi.Size())/(1<<20))
		}
	}

	fmt.Printf("\nbudget fill: UTF-8 bytes of context used of 3 × budget (intermem context --json)\n\n")
	fmt.Printf("%-44s %14s %14s %14s\n", "project", "budget 200", "budget 1200", "budget 5000")
	for _, p := range []struct{ name, dir, mem string }{
		{fmt.Sprintf("generated, %d entries", big.Entries), big.Root, big.MemoryDir},
		{"demo", demoProj, demoMem},
	} {
		fmt.Printf("%-44s", p.name)
		for _, b := range []int{200, 1200, 5000} {
			cmd := exec.Command(filepath.Join(bin, "intermem"), "context", "--project", p.dir, "--budget", fmt.Sprint(b), "--json")
			cmd.Env = append([]string{"INTERMEM_MEMORY_DIR=" + p.mem}, baseEnv...)
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("intermem context: %w", err)
			}
			var rep struct{ Context string }
			if err := json.Unmarshal(out, &rep); err != nil {
				return err
			}
			fmt.Printf(" %14s", fmt.Sprintf("%d/%d", len(rep.Context), 3*b))
		}
		fmt.Println()
	}
	return nil
}

func measure(bin string, r row, runs int) (result, error) {
	path := filepath.Join(bin, r.bin)
	var times, cpu []time.Duration
	var last []byte
	for i := 0; i < runs+10; i++ {
		if r.before != nil {
			r.before()
		}
		var out bytes.Buffer
		cmd := exec.Command(path, r.args...)
		cmd.Stdin = bytes.NewReader(r.stdin)
		cmd.Stdout = &out
		cmd.Env = r.env
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return result{}, err
		}
		if i >= 10 {
			times = append(times, d)
			cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		last = out.Bytes()
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
	pct := func(ts []time.Duration, p float64) time.Duration { return ts[int(p*float64(len(ts)-1)+0.5)] }
	return result{row: r, p50: pct(times, 0.50), p95: pct(times, 0.95), min: times[0], cpu50: pct(cpu, 0.50), out: len(last)}, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// copyTree copies a directory of regular files.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !fi.Mode().IsRegular() || strings.HasPrefix(fi.Name(), ".") && fi.Name() != ".gitignore" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
