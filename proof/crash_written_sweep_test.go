package proof

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/intermem/intermem/pkg/source/written"
)

// sweepWrittenFixture is a project with two written memories citing a
// file (one by --file, one in its text), both stale once the file
// goes, swept once stale: the next sweep, a day later, archives them.
func sweepWrittenFixture(t *testing.T) *fixture {
	f := newFixture(t, map[string]string{"internal/render/pdf.go": "package render\n", "internal/render/html.go": "package render\n"},
		map[string]string{"MEMORY.md": "# Memory\n"})
	f.layout = "flat"
	f.must("intermem", "write", "--type", "decision", "--title", "PDF rendering", "--content", "Invoices render to PDF.", "--file", "internal/render/pdf.go")
	f.must("intermem", "write", "--type", "learning", "--title", "Two renderers", "--content", "Templates are shared with `internal/render/pdf.go`.")
	f.must("intermem", "sweep")
	if err := os.Remove(filepath.Join(f.root, "internal/render/pdf.go")); err != nil {
		t.Fatal(err)
	}
	f.advanceDay()
	f.must("intermem", "sweep")
	f.advanceDay()
	return f
}

func readLog(t *testing.T, f *fixture) string {
	b, err := os.ReadFile(filepath.Join(f.root, ".intermem", written.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWrittenSweepCrashMatrix kills the sweep that archives written
// memories (two retire lines appended to their log in one step each) at
// every failpoint of the archive operation, and the sweep that restores
// them once the file they cite is back (their records appended again) at
// every failpoint of the restore, then recovers by intermem-recover
// --resume or by the next sweep: the log is byte-identical to an
// uninterrupted sweep's, whole at the crash (its before or after bytes),
// and holds each retire and record line once.
func TestWrittenSweepCrashMatrix(t *testing.T) {
	ref := sweepWrittenFixture(t)
	before := readLog(t, ref)
	ref.must("intermem", "sweep")
	archived := readLog(t, ref)
	if rs, _ := written.Records([]byte(archived)); len(rs) != 0 || len(written.Out([]byte(archived))) != 2 {
		t.Fatalf("the uninterrupted sweep did not archive both memories:\n%s", archived)
	}
	ref.write(filepath.Join(ref.root, "internal/render/pdf.go"), "package render\n")
	ref.advanceDay()
	ref.must("intermem", "sweep")
	restored := readLog(t, ref)
	if rs, _ := written.Records([]byte(restored)); len(rs) != 2 {
		t.Fatalf("the uninterrupted sweep did not restore both memories:\n%s", restored)
	}

	for _, kind := range []string{"archive", "restore"} {
		for _, fp := range []string{kind + ":after-journal", kind + ":after-target", kind + ":after-commit"} {
			for _, recovery := range []string{"recover", "next-writer"} {
				t.Run(fp+"/"+recovery, func(t *testing.T) {
					f := sweepWrittenFixture(t)
					was, want := before, archived
					if kind == "restore" {
						f.must("intermem", "sweep")
						f.write(filepath.Join(f.root, "internal/render/pdf.go"), "package render\n")
						f.advanceDay()
						was, want = archived, restored
					}
					if got := readLog(t, f); got != was {
						t.Fatalf("fixtures differ before the %s:\n%s\nwant\n%s", kind, got, was)
					}
					r := f.run("", []string{"INTERMEM_FAILPOINT=" + fp}, "intermem", "sweep")
					if r.code != 137 {
						t.Fatalf("sweep at %s: exit %d, want 137\n%s%s", fp, r.code, r.stdout, r.stderr)
					}
					if got := readLog(t, f); got != was && got != want {
						t.Errorf("after the crash at %s the log is neither its before nor its after state:\n%s", fp, got)
					}
					switch recovery {
					case "recover":
						f.must("intermem-recover", "--resume")
					case "next-writer":
						f.must("intermem", "sweep")
					}
					if got := readLog(t, f); got != want {
						t.Errorf("after recovery the log differs from an uninterrupted sweep's:\n--- got\n%s\n--- want\n%s", got, want)
					}
				})
			}
		}
	}
}
