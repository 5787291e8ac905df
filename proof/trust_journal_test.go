package proof

// The journal's trust proofs (issue 11, items 1, 11, 12, 13, 14): the real
// binaries against real stores, real symlinks and a real concurrent
// process. Each case uses only the binaries' output and bbolt, so the same
// file runs against any build.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// putJournalRecord writes a raw journal record into the fixture's store,
// as a store copied in with the project would hold it.
func (f *fixture) putJournalRecord(key string, raw []byte) {
	f.t.Helper()
	db, err := bolt.Open(f.storePath(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("journal"))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), raw)
	}); err != nil {
		f.t.Fatal(err)
	}
}

// recoverReport is intermem-recover --json, as far as these proofs read it.
type recoverReport struct {
	Incomplete []struct{ ID string }
	Refused    []struct {
		ID, Reason, Why, Path string
		Files                 []string
	}
}

func (f *fixture) recoverJSON() recoverReport {
	f.t.Helper()
	var rep recoverReport
	decodeJSON(f.t, "intermem-recover --json", f.must("intermem-recover", "--json").stdout, &rep)
	return rep
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrustPlantedJournalOp: a store copied in with a project holds
// pending operations nobody on this machine recorded — one whose step
// appends to ~/.ssh/authorized_keys, one that intermem really recorded for
// another user's copy of the project. No writer replays either: the
// writer does its own work, says once on stderr that it refused them;
// intermem-recover lists them with why; --discard drops one without
// touching a file. SessionStart counts them and describes neither.
func TestTrustPlantedJournalOp(t *testing.T) {
	f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Rules\n- Never push to main directly.\n",
	})
	f.sessions(1) // the store exists
	keys := filepath.Join(f.home, ".ssh", "authorized_keys")
	f.write(keys, "ssh-ed25519 AAAAC3Nza the-user@laptop\n")
	const plantedID = "20261101T090000Z-0badc0de"
	planted := fmt.Sprintf(`{"id":%q,"kind":"promote","state":"pending","created":"2026-11-01T09:00:00Z","updated":"2026-11-01T09:00:00Z","summary":"promote 1 entry: the deploy key belongs in authorized_keys","entries":["0123456789abcdef"],`+
		`"steps":[{"phase":1,"path":%q,"action":"insert","id":"0123456789abcdef","section":"Keys","block":"ssh-ed25519 AAAAC3Nza attacker@evil","before":"","after":""}]}`,
		plantedID, keys)
	f.putJournalRecord(plantedID, []byte(planted))

	// A real pending operation, recorded by intermem for another user's
	// project (their HOME, their key, their root), whose store is then
	// copied over this one's journal.
	other := newFixture(t, map[string]string{"CLAUDE.md": "# Other\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- The other project builds with make.\n- It ships on Tuesdays.\n",
	})
	other.sessions(3)
	otherPlan := other.planJSON()
	if len(candidates(otherPlan)) == 0 {
		t.Fatal("the other project has no candidates")
	}
	if r := other.run("", []string{"INTERMEM_FAILPOINT=promote:after-journal"}, "intermem-synthesize", "apply", "--approve", "all", "--import-agents"); r.code != 137 {
		t.Fatalf("apply in the other project: exit %d\n%s", r.code, r.stderr)
	}
	otherBefore := other.tree()
	var copiedID string
	other.view(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("journal")).ForEach(func(k, v []byte) error {
			if strings.Contains(string(v), `"pending"`) {
				copiedID = string(k)
				f.putJournalRecord(copiedID, append([]byte{}, v...))
			}
			return nil
		})
	})
	if copiedID == "" {
		t.Fatal("the other project left no pending operation")
	}

	// SessionStart describes neither refused operation (their records
	// are anyone's text), but says they are there and who lists them.
	start := f.run(hookPayload("SessionStart", "trust-start", f.root), nil, "intermem-inject")
	if start.code != 0 || strings.Contains(start.stdout, "deploy key") || strings.Contains(start.stdout, "was interrupted (") ||
		!strings.Contains(start.stdout, "2 interrupted intermem changes could not be verified") {
		t.Errorf("SessionStart with refused operations: exit %d, context:\n%s", start.code, start.stdout)
	}

	treeBefore := f.tree()
	r := f.run("", nil, "intermem", "sweep")
	if r.code != 0 {
		t.Fatalf("sweep with planted operations: exit %d\n%s", r.code, r.stderr)
	}
	if got := readFile(t, keys); got != "ssh-ed25519 AAAAC3Nza the-user@laptop\n" {
		t.Fatalf("a planted operation wrote ~/.ssh/authorized_keys:\n%s", got)
	}
	if hashTree(other.tree()) != hashTree(otherBefore) {
		t.Fatal("an operation copied from another project was replayed into it")
	}
	if hashTree(f.tree()) != hashTree(treeBefore) {
		t.Fatal("a refused operation changed the project")
	}
	if n := strings.Count(r.stderr, "intermem: warning:"); n != 1 || !strings.Contains(r.stderr, "intermem-recover") {
		t.Fatalf("sweep must warn once and name intermem-recover; stderr:\n%s", r.stderr)
	}

	// intermem-recover lists both, with why; --resume replays neither.
	rep := f.recoverJSON()
	if len(rep.Incomplete) != 0 || len(rep.Refused) != 2 {
		t.Fatalf("intermem-recover --json: %+v", rep)
	}
	for _, rf := range rep.Refused {
		// The planted record carries no MAC, so it reads as one an older
		// intermem could have left; the copied one is signed, by another key.
		reason, why := "not-ours", "not created by this user's intermem for this project"
		if rf.ID == plantedID {
			reason, why = "unsigned", "unsigned: recorded by an intermem from before operations were signed, or planted"
		}
		if rf.Reason != reason || rf.Why != why {
			t.Errorf("refused %s: reason %q, why %q", rf.ID, rf.Reason, rf.Why)
		}
		if rf.ID == plantedID && rf.Path != "~/.ssh/authorized_keys" {
			t.Errorf("the planted op's path is reported as %q", rf.Path)
		}
	}
	human := f.must("intermem-recover").stdout
	for _, want := range []string{plantedID, copiedID, "not created by this user's intermem for this project", "unsigned: recorded by an intermem from before operations were signed, or planted", "~/.ssh/authorized_keys", "--discard ID"} {
		if !strings.Contains(human, want) {
			t.Errorf("intermem-recover does not say %q:\n%s", want, human)
		}
	}
	f.must("intermem-recover", "--resume")
	if got := readFile(t, keys); got != "ssh-ed25519 AAAAC3Nza the-user@laptop\n" {
		t.Fatalf("intermem-recover --resume replayed a planted operation:\n%s", got)
	}

	// --discard drops them, touching no file.
	for _, id := range []string{plantedID, copiedID} {
		out := f.must("intermem-recover", "--discard", id).stdout
		if !strings.Contains(out, "Dropped journal record "+id) {
			t.Errorf("--discard %s: %s", id, out)
		}
	}
	if hashTree(f.tree()) != hashTree(treeBefore) || readFile(t, keys) != "ssh-ed25519 AAAAC3Nza the-user@laptop\n" {
		t.Fatal("--discard touched a file")
	}
	if out := f.must("intermem-recover").stdout; out != "No interrupted operations.\n" {
		t.Fatalf("after --discard: %s", out)
	}
	r = f.run("", nil, "intermem", "sweep")
	if r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Fatalf("sweep after --discard: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestTrustUnsignedOldOp: an apply killed after its journal record, the
// record then stripped of its MAC as an intermem from before operations
// were signed wrote it. It is refused, and intermem-recover says so
// specifically: unsigned, older or planted, the files it names, and how
// to proceed (check, then --discard ID, which touches no file).
func TestTrustUnsignedOldOp(t *testing.T) {
	f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- The project builds with make.\n",
	})
	f.layout = "flat"
	f.sessions(3)
	if n := len(candidates(f.planJSON())); n != 1 {
		t.Fatalf("the plan offers %d candidates, want 1", n)
	}
	if r := f.run("", []string{"INTERMEM_FAILPOINT=promote:after-journal"}, "intermem-synthesize", "apply", "--approve", "all", "--target", "1=CLAUDE.md"); r.code != 137 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	var id string
	var raw []byte
	f.view(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("journal")).ForEach(func(k, v []byte) error {
			if strings.Contains(string(v), `"pending"`) {
				id, raw = string(k), append([]byte{}, v...)
			}
			return nil
		})
	})
	if id == "" {
		t.Fatal("the killed apply left no pending operation")
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec["mac"] == nil {
		t.Fatalf("the record has no mac field to strip: %s", raw)
	}
	delete(rec, "mac")
	old, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	f.putJournalRecord(id, old)
	before := hashTree(f.tree())

	rep := f.recoverJSON()
	if len(rep.Incomplete) != 0 || len(rep.Refused) != 1 {
		t.Fatalf("intermem-recover --json: %+v", rep)
	}
	rf := rep.Refused[0]
	if rf.ID != id || rf.Reason != "unsigned" || rf.Why != "unsigned: recorded by an intermem from before operations were signed, or planted" ||
		len(rf.Files) != 2 || rf.Files[0] != "CLAUDE.md" || !strings.HasPrefix(rf.Files[1], "~/.claude/projects/") || !strings.HasSuffix(rf.Files[1], "/memory/MEMORY.md") {
		t.Errorf("refused: %+v", rf)
	}
	human := f.must("intermem-recover").stdout
	for _, want := range []string{
		id + "  refused: unsigned: recorded by an intermem from before operations were signed, or planted (claims: promote ",
		"; files: CLAUDE.md, ~/.claude/projects/",
		"/memory/MEMORY.md\n",
		"An unsigned operation was recorded by an intermem from before operations were signed, or planted:",
		"then drop it with --discard ID.",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("intermem-recover does not say %q:\n%s", want, human)
		}
	}
	f.must("intermem-recover", "--resume")
	if hashTree(f.tree()) != before {
		t.Fatal("--resume replayed an unsigned operation")
	}
	if out := f.must("intermem-recover", "--discard", id).stdout; !strings.Contains(out, "Dropped journal record "+id) {
		t.Errorf("--discard: %s", out)
	}
	if hashTree(f.tree()) != before {
		t.Fatal("--discard touched a file")
	}
}

// TestTrustConcurrentAppendDuringPrune: another process appends lines to
// MEMORY.md, as another Claude Code session does, all through real
// `intermem-synthesize apply` runs that prune 40 entries from it. Not one
// appended line may be lost. INTERMEM_PROOF_APPEND_RUNS sets the number of
// runs (default 6).
func TestTrustConcurrentAppendDuringPrune(t *testing.T) {
	var mem strings.Builder
	mem.WriteString("# Memory\n\n## Build\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&mem, "- Build step %02d runs `make target-%02d` before the release of component %02d.\n", i, i, i)
	}
	mem.WriteString("\n## Notes\n")
	f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n", "AGENTS.md": "# Agents\n"}, map[string]string{"MEMORY.md": mem.String()})
	f.layout = "flat"
	f.sessions(3)
	if n := len(candidates(f.planJSON())); n != 40 {
		t.Fatalf("the plan offers %d candidates, want 40", n)
	}
	template := takeSnapshot(t, f.dir)
	now := f.now
	memPath := filepath.Join(f.memDir, "MEMORY.md")

	runs := envInt(t, "INTERMEM_PROOF_APPEND_RUNS", 6)
	totalAppended, totalLost := 0, 0
	for run := 0; run < runs; run++ {
		template.restore(t, f.dir)
		f.now = now
		stop := filepath.Join(f.dir, fmt.Sprintf("stop-%d", run))
		count := filepath.Join(f.dir, fmt.Sprintf("count-%d", run))
		started := filepath.Join(f.dir, fmt.Sprintf("started-%d", run))
		// One line per open–append–close, as a session's write does.
		app := exec.Command("sh", "-c", `i=0; : > "$STARTED"
while [ ! -e "$STOP" ] && [ $i -lt 200000 ]; do
  echo "- Appended by another session $RUN-$i." >> "$MEM"
  i=$((i+1))
done
echo $i > "$COUNT"`)
		app.Env = []string{"PATH=" + os.Getenv("PATH"), "STOP=" + stop, "COUNT=" + count, "STARTED=" + started, "MEM=" + memPath, "RUN=" + strconv.Itoa(run)}
		if err := app.Start(); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		r := f.run("", nil, "intermem-synthesize", "apply", "--approve", "all", "--import-agents")
		os.WriteFile(stop, nil, 0o600)
		if err := app.Wait(); err != nil {
			t.Fatal(err)
		}
		if r.code != 0 {
			t.Fatalf("run %d: apply exit %d\n%s%s", run, r.code, r.stdout, r.stderr)
		}
		n, err := strconv.Atoi(strings.TrimSpace(readFile(t, count)))
		if err != nil {
			t.Fatal(err)
		}
		body := readFile(t, memPath)
		present := map[string]bool{}
		prefix := fmt.Sprintf("- Appended by another session %d-", run)
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, prefix) {
				present[line] = true
			}
		}
		lost := n - len(present)
		if lost > 0 {
			var missing []string
			for i := 0; i < n && len(missing) < 10; i++ {
				if !present[fmt.Sprintf("%s%d.", prefix, i)] {
					missing = append(missing, strconv.Itoa(i))
				}
			}
			t.Errorf("run %d: %d of %d appended lines lost (first: %s)", run, lost, n, strings.Join(missing, ", "))
		}
		totalAppended += n
		totalLost += lost
		if strings.Contains(body, "- Build step ") {
			t.Errorf("run %d: apply left promoted entries in MEMORY.md", run)
		}
	}
	t.Logf("%d runs, %d lines appended during apply, %d lost", runs, totalAppended, totalLost)
	if totalLost != 0 {
		t.Fatalf("%d of %d lines appended by another process during %d applies were lost", totalLost, totalAppended, runs)
	}
}

// TestTrustSymlinkedMemory: MEMORY.md is a link into a dotfiles
// repository. Pruning writes through the link: it stays a link, and the
// promoted fact leaves the dotfiles copy, so it lives in one place.
func TestTrustSymlinkedMemory(t *testing.T) {
	f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n"}, nil)
	f.layout = "flat"
	dot := filepath.Join(f.dir, "dotfiles", "claude", "MEMORY.md")
	f.write(dot, "# Memory\n\n## Rules\n- Never push to main directly; open a pull request.\n- Keep this one in memory.\n")
	link := filepath.Join(f.memDir, "MEMORY.md")
	if err := os.MkdirAll(f.memDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, link); err != nil {
		t.Fatal(err)
	}
	f.sessions(3)
	n := ""
	for _, c := range f.planJSON()["candidates"].([]any) {
		m := c.(map[string]any)
		if strings.Contains(m["text"].(string), "Never push") {
			n = jsonNum(m["n"])
		}
	}
	if n == "" {
		t.Fatal("no candidate for the fact")
	}
	f.must("intermem-synthesize", "apply", "--approve", n, "--import-agents")

	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("MEMORY.md is no longer a link: %v", st.Mode())
	}
	if target, _ := os.Readlink(link); target != dot {
		t.Fatalf("MEMORY.md links to %q, want %q", target, dot)
	}
	if got, want := readFile(t, dot), "# Memory\n\n## Rules\n- Keep this one in memory.\n"; got != want {
		t.Fatalf("the dotfiles copy holds:\n%s\nwant:\n%s", got, want)
	}
	places := 0
	for _, body := range []string{readFile(t, filepath.Join(f.root, "CLAUDE.md")), readFile(t, dot)} {
		places += strings.Count(body, "Never push to main directly")
	}
	if places != 1 {
		t.Fatalf("the promoted fact is in %d places, want 1", places)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dot)); len(ents) != 1 {
		t.Fatalf("left beside the dotfiles copy: %v", ents)
	}
}

// TestTrustBackupsAndTheClock: 20 operations fill the backup retention;
// then the clock is far behind (a VM restored, an NTP step) and apply
// runs. The backup apply prints must exist afterwards, and retention still
// removes the oldest backup by creation order.
func TestTrustBackupsAndTheClock(t *testing.T) {
	agents := "# Agents\n\n## Build\n- Build with `make`. <!-- intermem:0123456789abcdef -->\n- Test with `make test`. <!-- intermem:fedcba9876543210 -->\n"
	f := newFixture(t, map[string]string{"AGENTS.md": agents, "CLAUDE.md": "@AGENTS.md\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Rules\n- Never push to main directly; open a pull request.\n",
	})
	f.layout = "tiered"
	f.sessions(3)
	plan := f.planJSON()
	if len(candidates(plan)) == 0 {
		t.Fatal("no candidate")
	}
	backups := filepath.Join(f.root, ".intermem", "backups")
	var first string
	for i := 0; i < 20; i++ {
		cmd := "migrate"
		if i%2 == 1 {
			cmd = "flatten"
		}
		f.now = fmt.Sprintf("2026-11-04T10:%02d:00Z", i)
		var rep struct{ Op string }
		decodeJSON(t, "tier "+cmd, f.must("intermem", "tier", cmd, "--json").stdout, &rep)
		if rep.Op == "" {
			t.Fatalf("tier %s made no operation", cmd)
		}
		if i == 0 {
			first = rep.Op
		}
	}
	if ents, _ := os.ReadDir(backups); len(ents) != 20 {
		t.Fatalf("%d backups after 20 operations, want 20", len(ents))
	}

	f.now = "2019-03-01T08:00:00Z"
	var rep struct{ Backup, Op string }
	decodeJSON(t, "apply --json", f.must("intermem-synthesize", "apply", "--approve", "all", "--import-agents", "--json").stdout, &rep)
	if rep.Backup == "" {
		t.Fatal("apply printed no backup")
	}
	if st, err := os.Stat(rep.Backup); err != nil || !st.IsDir() {
		t.Fatalf("the backup apply just printed (%s) is gone: %v", rep.Backup, err)
	}
	if ents, _ := os.ReadDir(rep.Backup); len(ents) == 0 {
		t.Fatalf("the backup apply just printed is empty")
	}
	ents, _ := os.ReadDir(backups)
	if len(ents) != 20 {
		t.Fatalf("%d backups kept, want 20", len(ents))
	}
	if _, err := os.Stat(filepath.Join(backups, first)); err == nil {
		t.Fatalf("the oldest backup (%s) was kept and a newer one removed", first)
	}
}

// TestTrustDamagedJournalRecord: the record of an interrupted operation no
// longer decodes. intermem-recover reports it (not "No interrupted
// operations."), writers warn once and go on, it is kept, and only
// --discard ID drops it.
func TestTrustDamagedJournalRecord(t *testing.T) {
	f := promoteFixture(t, "flat")
	f.sessions(3)
	spec, _ := approveSpec(t, f.planJSON(), "Keep this one")
	if r := f.run("", []string{"INTERMEM_FAILPOINT=promote:after-journal"}, "intermem-synthesize", "apply", "--approve", spec, "--import-agents"); r.code != 137 {
		t.Fatalf("exit %d", r.code)
	}
	var id string
	for k, op := range f.journalOps() {
		if op.State == "pending" {
			id = k
		}
	}
	if id == "" {
		t.Fatal("no pending operation")
	}
	// The record's JSON is cut short, as a bad sector or a bad tool would.
	var raw []byte
	f.view(func(tx *bolt.Tx) error {
		raw = append([]byte{}, tx.Bucket([]byte("journal")).Get([]byte(id))...)
		return nil
	})
	f.putJournalRecord(id, raw[:len(raw)/2])
	treeBefore := f.tree()

	out := f.must("intermem-recover").stdout
	if !strings.Contains(out, id) || !strings.Contains(out, "no longer decodes") || strings.Contains(out, "No interrupted operations") {
		t.Fatalf("intermem-recover does not report the damaged record:\n%s", out)
	}
	rep := f.recoverJSON()
	if len(rep.Refused) != 1 || rep.Refused[0].ID != id || rep.Refused[0].Reason != "damaged" {
		t.Fatalf("intermem-recover --json: %+v", rep)
	}
	r := f.run("", nil, "intermem", "sweep")
	if r.code != 0 || strings.Count(r.stderr, "intermem: warning:") != 1 || !strings.Contains(r.stderr, "no longer decode") {
		t.Fatalf("sweep: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	f.must("intermem-recover", "--resume")
	if rep := f.recoverJSON(); len(rep.Refused) != 1 {
		t.Fatalf("the damaged record was not kept: %+v", rep)
	}
	if hashTree(f.tree()) != hashTree(treeBefore) {
		t.Fatal("a damaged record changed a file")
	}
	f.must("intermem-recover", "--discard", id)
	if out := f.must("intermem-recover").stdout; out != "No interrupted operations.\n" {
		t.Fatalf("after --discard: %s", out)
	}
	var raw2 []byte
	f.view(func(tx *bolt.Tx) error {
		raw2 = tx.Bucket([]byte("journal")).Get([]byte(id))
		return nil
	})
	if raw2 != nil {
		t.Fatal("--discard did not drop the record")
	}
	// The entries are candidates again: nothing was lost.
	if n := len(candidates(f.planJSON())); n < 5 {
		t.Fatalf("after --discard only %d candidates", n)
	}
}
