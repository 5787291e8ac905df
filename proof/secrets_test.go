package proof

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// secretRecord is one line of pkg/redact/testdata/secrets.txt: a fake
// secret and a realistic memory bullet that holds it.
type secretRecord struct {
	kind, value, bullet string
	line                int
}

func readSecretCorpus(t *testing.T) []secretRecord {
	t.Helper()
	fh, err := os.Open("../pkg/redact/testdata/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []secretRecord
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], parts[1]) || !strings.HasPrefix(parts[2], "- ") {
			t.Fatalf("secrets.txt:%d: want kind<TAB>secret<TAB>bullet holding the secret", n)
		}
		out = append(out, secretRecord{parts[0], parts[1], parts[2], n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 30 {
		t.Fatalf("secrets.txt has %d records; the proof wants at least 30", len(out))
	}
	return out
}

// leakIndex finds any 8-byte piece of any secret's distinctive body in a
// sink, as written and as JSON writes it (escaped), case-sensitively and
// case-folded: the criterion of pkg/redact's own corpus test, over every
// byte intermem writes. A PEM key's armor lines ("-----BEGIN PRIVATE
// KEY-----") are not its body: "private key" is an ordinary phrase.
type leakIndex struct {
	pieces map[uint64][]piece // 8 bytes as a number → which secret
	folded map[uint64][]piece
}

type piece struct {
	rec  int
	text string
}

var pemArmor = regexp.MustCompile(`-----(BEGIN|END) [A-Z ]+-----`)

func window(s string, i int) uint64 { return binary.LittleEndian.Uint64([]byte(s[i : i+8])) }

func newLeakIndex(recs []secretRecord) *leakIndex {
	ix := &leakIndex{pieces: map[uint64][]piece{}, folded: map[uint64][]piece{}}
	// A piece that the text around the secrets, or a redaction marker, also holds is not
	// distinctive: the fixed prefix "AGE-SECRET-KEY-1" folds to "-secret-", which the
	// marker "[REDACTED:aws-secret-key]" holds.
	common := map[string]bool{}
	for _, rec := range recs {
		kind, _, _ := strings.Cut(rec.kind, "/")
		rest := strings.ToLower(strings.ReplaceAll(rec.bullet, rec.value, "\x00") + "\x00[REDACTED:" + kind + "]")
		for i := 0; i+8 <= len(rest); i++ {
			common[rest[i:i+8]] = true
		}
	}
	for r, rec := range recs {
		body := pemArmor.ReplaceAllString(rec.value, "")
		esc, _ := json.Marshal(body)
		escHTML := string(esc[1 : len(esc)-1])
		forms := []string{body, escHTML, strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(escHTML)}
		for _, form := range forms {
			for i := 0; i+8 <= len(form); i++ {
				if common[strings.ToLower(form[i:i+8])] {
					continue
				}
				w := window(form, i)
				ix.pieces[w] = append(ix.pieces[w], piece{r, form[i : i+8]})
				lw := window(strings.ToLower(form), i)
				ix.folded[lw] = append(ix.folded[lw], piece{r, form[i : i+8]})
			}
		}
	}
	return ix
}

// leaks returns, per secret record, the first piece of it found in body.
func (ix *leakIndex) leaks(body []byte) map[int]string {
	out := map[int]string{}
	s := string(body)
	lower := strings.ToLower(s)
	for i := 0; i+8 <= len(s); i++ {
		for _, p := range ix.pieces[window(s, i)] {
			if _, ok := out[p.rec]; !ok && s[i:i+8] == p.text {
				out[p.rec] = fmt.Sprintf("%q at byte %d: …%s…", p.text, i, around(s, i))
			}
		}
		if len(lower) == len(s) {
			for _, p := range ix.folded[window(lower, i)] {
				if _, ok := out[p.rec]; !ok && lower[i:i+8] == strings.ToLower(p.text) {
					out[p.rec] = fmt.Sprintf("%q case-folded at byte %d: …%s…", p.text, i, around(s, i))
				}
			}
		}
	}
	return out
}

func around(s string, i int) string {
	a, b := max(0, i-40), min(len(s), i+48)
	return strings.ToValidUTF8(s[a:b], "?")
}

// TestSecrets runs intermem's whole life cycle over auto-memory holding
// every fake secret of pkg/redact/testdata/secrets.txt (as MEMORY.md
// bullets, in a pointer line, and inside one-memory topic files with
// frontmatter), in both layouts: sessions (Stop and SessionEnd hooks, one
// observation forced into the spool), SessionStart injection and intermem
// context, plan (text and JSON), apply --approve all with an edit that
// carries a secret, validate, sweep, archiving a promoted fact that went
// stale, archived, search, status, topics, recover, and hook failures that
// land in the logs. Then no 8-byte piece of any secret may appear in any
// sink: the store's raw bytes, every other file under .intermem (log,
// context cache and index, spool, .corrupt-* files) except backups, the
// plugin-data log, every project file (CLAUDE.md, AGENTS.md,
// docs/intermem/**, .archived.md), the injected context and the stdout and
// stderr of every command. Backups keep the user's exact bytes by design:
// they must hold the original memory, owner-only.
func TestSecrets(t *testing.T) {
	recs := readSecretCorpus(t)
	ix := newLeakIndex(recs)
	kinds := map[string]bool{}
	for _, r := range recs {
		kinds[r.kind] = true
	}
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			sinks, planted := secretLifeCycle(t, layout, recs)
			// The detector itself: it must find every planted secret in
			// the user's own memory files, or its silence proves nothing.
			if found := ix.leaks(planted); len(found) != len(recs)-1 {
				t.Fatalf("the leak detector finds %d of the %d secrets planted in auto-memory", len(found), len(recs)-1)
			}
			names := make([]string, 0, len(sinks))
			for name := range sinks {
				names = append(names, name)
			}
			sort.Strings(names)
			var bytesChecked int
			for _, name := range names {
				bytesChecked += len(sinks[name])
				for r, where := range ix.leaks(sinks[name]) {
					t.Errorf("LEAK: %s secret (secrets.txt:%d) reaches %s: %s", recs[r].kind, recs[r].line, name, where)
				}
			}
			t.Logf("%s: %d secrets (%d formats) × %d sinks checked (%d bytes); every 8-byte piece, raw, JSON-escaped and case-folded",
				layout, len(recs), len(kinds), len(names), bytesChecked)
		})
	}
}

// secretLifeCycle runs the life cycle and returns every sink's bytes by
// name, and the auto-memory it planted (every secret but the one used as
// an --edit).
func secretLifeCycle(t *testing.T, layout string, recs []secretRecord) (map[string][]byte, []byte) {
	sinks := map[string][]byte{}
	// One-memory files take four records, the pointer hook one, the cited
	// (archivable) fact one, the --edit one; MEMORY.md holds the rest.
	byKind := func(kind string) secretRecord {
		for _, r := range recs {
			if r.kind == kind {
				return r
			}
		}
		t.Fatalf("secrets.txt has no %s record", kind)
		return secretRecord{}
	}
	topics := []secretRecord{byKind("stripe-key"), byKind("jwt"), byKind("npm-token"), byKind("vault-token")}
	pointer, cited, edit := byKind("slack-token"), byKind("aws-access-key"), byKind("gitlab-token")
	special := map[int]bool{}
	for _, r := range append(topics, pointer, cited, edit) {
		special[r.line] = true
	}
	var mem strings.Builder
	mem.WriteString("# Memory\n\n## Credentials\n")
	for _, r := range recs {
		if !special[r.line] {
			mem.WriteString(r.bullet + "\n")
		}
	}
	fmt.Fprintf(&mem, "\n## Deploy\n- `scripts/deploy.sh` signs releases with %s.\n", cited.value)
	mem.WriteString("\n## Topics\n")
	memory := map[string]string{}
	for i, r := range topics {
		name := fmt.Sprintf("reference_cred_%d.md", i)
		text := strings.TrimPrefix(r.bullet, "- ")
		memory[name] = fmt.Sprintf("---\nname: cred-%d\ndescription: %s\nmetadata:\n  type: reference\n---\n%s\n", i, text, text)
		fmt.Fprintf(&mem, "- [Credential %d](%s) — see the file\n", i, name)
	}
	fmt.Fprintf(&mem, "- [Bot](reference_cred_0.md) — %s\n", strings.TrimPrefix(pointer.bullet, "- "))
	memory["MEMORY.md"] = mem.String()

	f := newFixture(t, map[string]string{
		"CLAUDE.md":          "# Project\n\n## Rules\n\n- Be brief.\n",
		"AGENTS.md":          "# Guide\n\n## Architecture\n\n- Handlers live in `internal/http`.\n",
		"internal/http/h.go": "package http\n",
		"scripts/deploy.sh":  "#!/bin/sh\n",
	}, memory)
	f.layout = layout
	pluginData := filepath.Join(f.dir, "plugin-data")
	originals := map[string][]byte{}
	var planted []byte
	for name := range memory {
		b, _ := os.ReadFile(filepath.Join(f.memDir, name))
		originals[name] = b
		planted = append(append(planted, b...), 0)
	}
	out := func(name string, r result) {
		sinks["stdout of "+name] = []byte(r.stdout)
		sinks["stderr of "+name] = []byte(r.stderr)
	}
	hook := func(name, bin, file, session string, env ...string) result {
		r := f.run(payload(t, file, session, f.root), env, bin)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		out(name, r)
		return r
	}

	// Sessions, and one observation spooled while the store is held.
	f.sessions(3)
	hook("SessionEnd hook", "intermem-snapshot", "SessionEnd.prompt_input_exit.json", "secret-end")
	spool := filepath.Join(f.root, ".intermem", "spool")
	func() {
		db, err := bolt.Open(f.storePath(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		at := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		os.Chtimes(filepath.Join(f.memDir, "MEMORY.md"), at, at) // a new fingerprint
		hook("Stop hook while the store is busy", "intermem-snapshot", "Stop.2.1.197.json", "secret-spooled")
		ents, _ := os.ReadDir(spool)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(spool, e.Name()))
			sinks["spool/"+e.Name()] = b
		}
		if len(ents) == 0 {
			t.Fatalf("the Stop hook did not spool its observation while the store was held")
		}
	}()

	// Injection, then the plan and its application.
	r := hook("SessionStart hook", "intermem-inject", "SessionStart.startup.interactive.json", "secret-start")
	var inj struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	decodeJSON(t, "SessionStart output", r.stdout, &inj)
	if inj.HookSpecificOutput.AdditionalContext == "" {
		t.Fatalf("the SessionStart hook injected nothing:\n%s", r.stdout)
	}
	sinks["injected context (decoded)"] = []byte(inj.HookSpecificOutput.AdditionalContext)
	cmd := func(args ...string) result {
		r := f.must(args[0], args[1:]...)
		name := strings.Join(args, " ")
		if len(name) > 60 {
			name = name[:60] + "…"
		}
		out(name, r)
		return r
	}
	cmd("intermem", "context")
	cmd("intermem-synthesize", "plan")
	plan := f.planJSON()
	pj, _ := json.Marshal(plan)
	sinks["stdout of intermem-synthesize plan --json"] = pj
	cands := candidates(plan)
	if len(cands) < len(recs)/2 {
		t.Fatalf("the plan offers %d candidates for %d secret-bearing entries", len(cands), len(recs))
	}
	// Edit the last candidate (not the cited fact) into text with a secret.
	last := plan["candidates"].([]any)[len(cands)-1].(map[string]any)
	if strings.Contains(last["text"].(string), "deploy.sh") {
		t.Fatalf("the last candidate is the cited fact")
	}
	cmd("intermem-synthesize", "apply", "--approve", "all", "--edit", jsonNum(last["n"])+"="+strings.TrimPrefix(edit.bullet, "- "), "--import-agents")
	for name, want := range originals {
		if !backedUp(t, f, want) {
			t.Errorf("no backup under .intermem/backups holds the original bytes of %s", name)
		}
	}
	checkBackupModes(t, f)

	// Check, decay, archive.
	cmd("intermem", "validate")
	cmd("intermem", "validate", "--json")
	cmd("intermem", "sweep")
	if err := os.Remove(filepath.Join(f.root, "scripts", "deploy.sh")); err != nil {
		t.Fatal(err)
	}
	cmd("intermem", "sweep", "--json")
	f.advanceDay()
	cmd("intermem", "sweep")
	var arch struct{ Archived []struct{ ID string } }
	decodeJSON(t, "archived --json", cmd("intermem", "archived", "--json").stdout, &arch)
	if len(arch.Archived) != 1 {
		t.Fatalf("want the fact citing the deleted scripts/deploy.sh archived, archived = %v", arch.Archived)
	}
	cmd("intermem", "archived")

	// Queries and reports.
	for _, q := range []string{"token", "key", "password", "deploy"} {
		cmd("intermem", "search", q)
	}
	cmd("intermem", "status")
	cmd("intermem", "status", "--json")
	cmd("intermem", "topics")
	cmd("intermem", "context")
	cmd("intermem-recover")
	hook("SessionStart hook after promotion", "intermem-inject", "SessionStart.clear.json", "secret-start-2")

	// Failures that are logged: a cwd holding secrets (no project: the
	// plugin-data log), input that is not JSON, an unusable session id.
	for i, rec := range recs[:6] {
		p := fmt.Sprintf(`{"session_id":"fail-%d","cwd":%q,"hook_event_name":"Stop"}`, i, filepath.Join(f.dir, "gone", rec.value))
		r := f.run(p, []string{"CLAUDE_PLUGIN_DATA=" + pluginData}, "intermem-snapshot")
		out(fmt.Sprintf("Stop hook with a secret in a missing cwd (%d)", i), r)
	}
	// Arguments a newer hooks.json might pass are logged, not fatal.
	r = f.run(payload(t, "Stop.2.1.197.json", "secret-args", f.root), nil, "intermem-snapshot", "--token="+recs[2].value, recs[3].value)
	out("Stop hook with secrets in unknown arguments", r)
	if log, _ := os.ReadFile(filepath.Join(f.root, ".intermem", "log")); !strings.Contains(string(log), "ignoring bad arguments") {
		t.Errorf("the hook did not log its unknown arguments: the log sink was not exercised:\n%s", log)
	}
	r = f.run("not json: "+recs[0].bullet, nil, "intermem-snapshot")
	out("Stop hook fed a secret as plain text", r)
	r = f.run(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionStart"}`, recs[1].value+"/x", f.root), nil, "intermem-inject")
	out("SessionStart hook with a secret in a bad session id", r)

	// A store that stops being intermem's (its meta bucket gone) is moved
	// aside whole: the .corrupt-* copy holds everything the store held.
	func() {
		db, err := bolt.Open(f.storePath(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("meta")) }); err != nil {
			t.Fatal(err)
		}
	}()
	f.advanceDay()
	hook("Stop hook that moves the store aside", "intermem-snapshot", "Stop.after-tool-use.json", "secret-aside")
	if asides, _ := filepath.Glob(f.storePath() + ".corrupt-*"); len(asides) != 1 {
		t.Errorf("the foreign store was not moved aside: %v", asides)
	}

	// Every byte intermem wrote.
	state := filepath.Join(f.root, ".intermem")
	filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(state, path)
		if d.IsDir() && rel == "backups" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(path)
			sinks[".intermem/"+filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if len(sinks[".intermem/intermem.db"]) == 0 || len(sinks[".intermem/log"]) == 0 {
		t.Fatalf("the store or the log is missing")
	}
	if b, err := os.ReadFile(filepath.Join(pluginData, "intermem.log")); err != nil || len(b) == 0 {
		t.Errorf("the hooks without a project logged nothing to the plugin-data log (%v)", err)
	} else {
		sinks["plugin-data/intermem.log"] = b
	}
	for path, body := range f.tree() {
		if strings.HasPrefix(path, "proj/") {
			sinks[path] = []byte(body)
		}
	}
	for _, doc := range []string{"proj/CLAUDE.md", "proj/AGENTS.md", "proj/docs/intermem/.archived.md"} {
		if _, ok := sinks[doc]; !ok {
			t.Errorf("%s does not exist: the life cycle did not reach it", doc)
		}
	}
	return sinks, planted
}

// backedUp reports whether some backup file holds exactly want.
func backedUp(t *testing.T, f *fixture, want []byte) bool {
	found := false
	filepath.WalkDir(filepath.Join(f.root, ".intermem", "backups"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(path); string(b) == string(want) {
				found = true
			}
		}
		return nil
	})
	return found
}

// checkBackupModes: backups are owner-only, in owner-only directories.
func checkBackupModes(t *testing.T, f *fixture) {
	t.Helper()
	state := filepath.Join(f.root, ".intermem")
	n := 0
	filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		rel, _ := filepath.Rel(state, path)
		if rel != "." && rel != "backups" && !strings.HasPrefix(rel, "backups/") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			t.Error(err)
			return nil
		}
		switch {
		case d.IsDir() && info.Mode().Perm() != 0o700:
			t.Errorf("backup directory .intermem/%s has mode %v, want 0700", rel, info.Mode().Perm())
		case d.Type().IsRegular():
			n++
			if info.Mode().Perm() != 0o600 {
				t.Errorf("backup .intermem/%s has mode %v, want 0600", rel, info.Mode().Perm())
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("no backup files under .intermem/backups")
	}
}
