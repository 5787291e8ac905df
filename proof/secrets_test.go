package proof

import (
	"bufio"
	"encoding/base64"
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
// secret in one format and a realistic memory bullet that holds it.
type secretRecord struct {
	format, kind, value, bullet string
	line                        int
}

func readSecretCorpus(t *testing.T) []secretRecord {
	t.Helper()
	fh, err := os.Open("../pkg/redact/testdata/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []secretRecord
	formats := map[string]bool{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], parts[1]) || !strings.HasPrefix(parts[2], "- ") || formats[parts[0]] {
			t.Fatalf("secrets.txt:%d: want a new format<TAB>secret<TAB>bullet holding the secret", n)
		}
		formats[parts[0]] = true
		kind, _, _ := strings.Cut(parts[0], "/")
		// "⏎" is a line break: a record that spans several memory entries.
		nl := func(s string) string { return strings.ReplaceAll(s, "⏎", "\n") }
		out = append(out, secretRecord{parts[0], kind, nl(parts[1]), nl(parts[2]), n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(formats) < 60 {
		t.Fatalf("secrets.txt has %d formats; the proof wants at least 60", len(formats))
	}
	return out
}

// The fields of auto-memory that can carry a secret. A secret is planted
// in every field that can hold it: the single-line ones (a heading, a
// table cell, an index line, a frontmatter value, a file name) cannot hold
// a key that spans lines, and a file name cannot hold a "/".
const (
	fieldProse       = "prose"
	fieldHeading     = "heading"
	fieldTable       = "table cell"
	fieldFence       = "fence"
	fieldPointer     = "pointer line"
	fieldName        = "frontmatter name"
	fieldDescription = "frontmatter description"
	fieldBody        = "topic-file body"
	fieldFileName    = "file name"
	fieldEdit        = "apply --edit text"
)

// contextOnly are the kinds of secret that only their context marks as
// one (a label, a URL's user part, a flag, a header, a JSON key): their
// bare value, which is all a file name holds, is a random string like any
// other, so they are not planted as file names.
var contextOnly = map[string]bool{
	"password": true, "token": true, "api-key": true, "secret": true, "client-secret": true,
	"url-credentials": true, "bearer-token": true, "basic-auth": true, "authorization": true,
	"okta-token": true, "aws-secret-key": true, "private-key-id": true, "aws-presigned-signature": true,
}

var secretFields = []string{fieldProse, fieldHeading, fieldTable, fieldFence, fieldPointer, fieldName, fieldDescription, fieldBody, fieldFileName}

// planted is one fake secret written into one field of auto-memory.
type planted struct {
	rec   secretRecord
	field string
	value string // the record's value, made distinct per field (variant)
	text  string // the record's bullet, without its "- ", holding value
}

func (p planted) String() string {
	return fmt.Sprintf("%s in a %s (secrets.txt:%d)", p.rec.format, p.field, p.rec.line)
}

// variant makes a secret distinct per field while keeping its shape:
// after each FAKE (or Fake, deadbeef) tag, the run of letters and digits
// is rotated by k within its class (hex within hex), so a leak names the
// field it came from. A base64 value (Basic auth) is varied inside.
func variant(v string, k int) string {
	if k == 0 {
		return v
	}
	if b, err := base64.StdEncoding.DecodeString(v); err == nil && strings.Contains(string(b), "FAKE") {
		return base64.StdEncoding.EncodeToString([]byte(variant(string(b), k)))
	}
	out := []byte(v)
	for _, tag := range []string{"FAKE", "Fake", "deadbeef"} {
		hex := tag == "deadbeef"
		for i := 0; ; {
			j := strings.Index(string(out[i:]), tag)
			if j < 0 {
				break
			}
			i += j + len(tag)
			for ; i < len(out); i++ {
				c := out[i]
				switch {
				case hex && '0' <= c && c <= '9', hex && 'a' <= c && c <= 'f':
					const h = "0123456789abcdef"
					out[i] = h[(strings.IndexByte(h, c)+k)%16]
					continue
				case hex:
				case 'a' <= c && c <= 'z':
					out[i] = 'a' + (c-'a'+byte(k))%26
					continue
				case 'A' <= c && c <= 'Z':
					out[i] = 'A' + (c-'A'+byte(k))%26
					continue
				case '0' <= c && c <= '9':
					out[i] = '0' + (c-'0'+byte(k))%10
					continue
				}
				break
			}
		}
	}
	return string(out)
}

// leakIndex finds any 8-byte piece of any planted secret's distinctive
// body in a sink, as written and as JSON writes it (escaped),
// case-sensitively and case-folded: the criterion of pkg/redact's own
// corpus test, over every byte intermem writes. A PEM key's armor lines
// ("-----BEGIN PRIVATE KEY-----") are not its body: "private key" is an
// ordinary phrase.
type leakIndex struct {
	pieces map[uint64][]piece // 8 bytes as a number → which secret
	folded map[uint64][]piece
}

type piece struct {
	rec  int
	text string
	form string // the form of the secret the piece was cut from
	off  int    // where in form
}

// hexOnly reports whether s is only hex digits. Such a piece is judged on
// 16 bytes, not 8: the store holds many hashes (entry ids, content sums,
// blob hashes), and with ~10^5 hex positions there against ~10^4 hex
// pieces of the planted secrets, some 8-digit piece turns up by chance
// (16^8 ≈ 4·10^9). A hex secret that leaks is longer than 16 digits, or
// sits among non-hex bytes that the next 8 bytes of the window carry.
func hexOnly(s string) bool { return strings.Trim(s, "0123456789abcdefABCDEF") == "" }

// extends reports whether the 16 bytes of p's form around the piece found
// at i in s are in s too (compared by eq), or whether the form is too
// short to tell.
func (p piece) extends(s string, i int, eq func(a, b string) bool) bool {
	if len(p.form) < 16 {
		return true
	}
	for k := max(0, p.off+8-16); k <= p.off && k+16 <= len(p.form); k++ {
		si := i - (p.off - k)
		if si >= 0 && si+16 <= len(s) && eq(s[si:si+16], p.form[k:k+16]) {
			return true
		}
	}
	return false
}

var pemArmor = regexp.MustCompile(`-----(BEGIN|END) [A-Z ]+-----`)

func window(s string, i int) uint64 { return binary.LittleEndian.Uint64([]byte(s[i : i+8])) }

func newLeakIndex(ps []planted) *leakIndex {
	ix := &leakIndex{pieces: map[uint64][]piece{}, folded: map[uint64][]piece{}}
	forms := func(p planted) []string {
		body := pemArmor.ReplaceAllString(p.value, "")
		esc, _ := json.Marshal(body)
		escHTML := string(esc[1 : len(esc)-1])
		return []string{body, escHTML, strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(escHTML)}
	}
	// A piece is not distinctive when the text around the secrets or a
	// redaction marker also holds it (the prefix "AGE-SECRET-KEY-1" folds
	// to "-secret-", which "[REDACTED:aws-secret-key]" holds), or when
	// several secrets share it (a fixed prefix such as "ghp_FAKE"), or
	// when it is only digits (a file's modification time in nanoseconds
	// holds any 8 digits sooner or later).
	common := map[string]bool{}
	owner := map[string]int{}
	for i, p := range ps {
		rest := strings.ToLower(strings.ReplaceAll(p.text, p.value, "\x00") + "\x00[REDACTED:" + p.rec.kind + "]")
		for j := 0; j+8 <= len(rest); j++ {
			common[rest[j:j+8]] = true
		}
		for _, form := range forms(p) {
			lf := strings.ToLower(form)
			for j := 0; j+8 <= len(lf); j++ {
				if o, ok := owner[lf[j:j+8]]; ok && o != i {
					common[lf[j:j+8]] = true
				}
				owner[lf[j:j+8]] = i
			}
		}
	}
	for r, p := range ps {
		for _, form := range forms(p) {
			for i := 0; i+8 <= len(form); i++ {
				if common[strings.ToLower(form[i:i+8])] || strings.Trim(form[i:i+8], "0123456789") == "" {
					continue
				}
				w := window(form, i)
				ix.pieces[w] = append(ix.pieces[w], piece{r, form[i : i+8], form, i})
				lw := window(strings.ToLower(form), i)
				ix.folded[lw] = append(ix.folded[lw], piece{r, form[i : i+8], form, i})
			}
		}
	}
	return ix
}

// leaks returns, per planted secret, the first piece of it found in body.
func (ix *leakIndex) leaks(body []byte) map[int]string {
	out := map[int]string{}
	s := string(body)
	lower := strings.ToLower(s)
	for i := 0; i+8 <= len(s); i++ {
		for _, p := range ix.pieces[window(s, i)] {
			if _, ok := out[p.rec]; !ok && s[i:i+8] == p.text && (!hexOnly(p.text) || p.extends(s, i, func(a, b string) bool { return a == b })) {
				out[p.rec] = fmt.Sprintf("%q at byte %d: …%s…", p.text, i, around(s, i))
			}
		}
		if len(lower) == len(s) {
			for _, p := range ix.folded[window(lower, i)] {
				if _, ok := out[p.rec]; !ok && lower[i:i+8] == strings.ToLower(p.text) && (!hexOnly(p.text) || p.extends(lower, i, strings.EqualFold)) {
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
// every fake secret of pkg/redact/testdata/secrets.txt (at least 60
// formats) in every field that can carry it: a MEMORY.md bullet, a
// section heading, a table cell, a fenced block, an index (pointer) line,
// a topic file's frontmatter name and description, its body and its file
// name; each planted copy is distinct, so a leak names its field. Both
// layouts: sessions (Stop and SessionEnd hooks, one observation forced
// into the spool), SessionStart injection and intermem context, plan (text
// and JSON), apply --approve all with --promote-redacted for every entry
// kept private and an edit that carries a secret, validate, sweep,
// archiving a promoted fact that went stale, archived, search, status,
// topics, recover, and hook failures that land in the logs. Then no 8-byte
// piece of any planted secret may appear in any sink: the store's raw
// bytes, every other file under .intermem (log, context cache and index,
// spool, .corrupt-* files) except backups, the plugin-data log, every
// project file (CLAUDE.md, AGENTS.md, docs/intermem/**, .archived.md), the
// injected context and the stdout and stderr of every command. Backups
// keep the user's exact bytes by design: they must hold the original
// memory, owner-only. And every planted secret is still in auto-memory
// after the apply: an entry that holds one is never pruned.
func TestSecrets(t *testing.T) {
	recs := readSecretCorpus(t)
	for _, layout := range []string{"tiered", "flat"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			sinks, plantedBytes, ps := secretLifeCycle(t, layout, recs)
			ix := newLeakIndex(ps)
			// The detector itself: it must find every planted secret in
			// the user's own memory files, or its silence proves nothing.
			found := ix.leaks(plantedBytes)
			for i, p := range ps {
				if _, ok := found[i]; !ok && p.field != fieldEdit {
					t.Errorf("the leak detector does not find %s in the memory it was planted in", p)
				}
			}
			names := make([]string, 0, len(sinks))
			for name := range sinks {
				names = append(names, name)
			}
			sort.Strings(names)
			var bytesChecked int
			leaked := map[string]bool{}
			for _, name := range names {
				bytesChecked += len(sinks[name])
				for r, where := range ix.leaks(sinks[name]) {
					leaked[ps[r].field] = true
					t.Errorf("LEAK: %s reaches %s: %s", ps[r], name, where)
				}
			}
			fields := map[string]int{}
			for _, p := range ps {
				fields[p.field]++
			}
			var per []string
			for _, f := range append(secretFields, fieldEdit) {
				per = append(per, fmt.Sprintf("%s %d", f, fields[f]))
			}
			t.Logf("%s: %d formats, %d planted secrets (%s) × %d sinks checked (%d bytes); every 8-byte piece, raw, JSON-escaped and case-folded",
				layout, len(recs), len(ps), strings.Join(per, ", "), len(names), bytesChecked)
		})
	}
}

// plantSecrets lays out auto-memory holding every record in every field
// that can carry it, plus a few facts without secrets. It returns the
// memory files, every planted copy, the one a promoted fact cites a file
// with (for archiving), and the text used as an --edit.
func plantSecrets(t *testing.T, recs []secretRecord) (map[string]string, []planted, planted) {
	byFormat := func(format string) secretRecord {
		for _, r := range recs {
			if r.format == format {
				return r
			}
		}
		t.Fatalf("secrets.txt has no %s record", format)
		return secretRecord{}
	}
	var ps []planted
	plant := func(r secretRecord, field string) planted {
		k := 0
		for i, f := range append(secretFields, fieldEdit) {
			if f == field {
				k = i
			}
		}
		v := variant(r.value, k)
		p := planted{rec: r, field: field, value: v, text: strings.ReplaceAll(strings.TrimPrefix(r.bullet, "- "), r.value, v)}
		if !strings.Contains(p.text, v) {
			t.Fatalf("%s: the variant is not in its text", p)
		}
		ps = append(ps, p)
		return p
	}
	cited, edit := byFormat("aws-access-key"), byFormat("gitlab-token")
	memory := map[string]string{}
	var mem, table, fences, pointers, headings strings.Builder
	mem.WriteString("# Memory\n\n## Build\n- `make test` runs the whole suite.\n- Releases are tagged from main only.\n\n## Credentials\n")
	table.WriteString("\n## Where credentials live\n| format | note |\n|---|---|\n")
	fences.WriteString("\n## Setup\n")
	pointers.WriteString("\n## Index\n")
	for i, r := range recs {
		oneLine := !strings.Contains(r.value, "\n")
		if r.line != cited.line && r.line != edit.line {
			mem.WriteString("- " + plant(r, fieldProse).text + "\n")
		}
		if oneLine {
			fmt.Fprintf(&headings, "\n## %s\n- See the runbook, entry %d.\n", plant(r, fieldHeading).text, i)
			fmt.Fprintf(&table, "| %s | %s |\n", r.format, plant(r, fieldTable).text)
			fmt.Fprintf(&pointers, "- [Note %d](plain_%d.md) — %s\n", i, i, plant(r, fieldPointer).text)
			memory[fmt.Sprintf("plain_%d.md", i)] = fmt.Sprintf("---\nname: note-%d\ndescription: a plain note %d\nmetadata:\n  type: reference\n---\nNothing secret here, note %d.\n", i, i, i)
			memory[fmt.Sprintf("name_%d.md", i)] = fmt.Sprintf("---\nname: %s\ndescription: a reference note %d\nmetadata:\n  type: reference\n---\nSee the vault, note %d.\n", plant(r, fieldName).text, i, i)
			memory[fmt.Sprintf("desc_%d.md", i)] = fmt.Sprintf("---\nname: desc-%d\ndescription: %s\nmetadata:\n  type: reference\n---\nSee the vault, item %d.\n", i, plant(r, fieldDescription).text, i)
		}
		fmt.Fprintf(&fences, "- %s setup:\n  ```\n  %s\n  ```\n", r.format, strings.ReplaceAll(plant(r, fieldFence).text, "\n", "\n  "))
		memory[fmt.Sprintf("body_%d.md", i)] = fmt.Sprintf("---\nname: body-%d\ndescription: how to reach service %d\nmetadata:\n  type: reference\n---\n%s\n", i, i, plant(r, fieldBody).text)
		if oneLine && !contextOnly[r.kind] && !strings.ContainsAny(r.value, "/\x00") && len(r.value) < 200 {
			p := plant(r, fieldFileName)
			memory[p.value+".md"] = fmt.Sprintf("---\nname: keys-%d\ndescription: where keys for %d live\nmetadata:\n  type: reference\n---\nIn the team vault.\n", i, i)
		}
	}
	c := plant(cited, fieldProse)
	fmt.Fprintf(&mem, "\n## Deploy\n- `scripts/deploy.sh` signs releases with %s.\n", c.value)
	mem.WriteString(table.String() + fences.String() + pointers.String() + headings.String())
	memory["MEMORY.md"] = mem.String()
	return memory, ps, plant(edit, fieldEdit)
}

// secretLifeCycle runs the life cycle and returns every sink's bytes by
// name, the auto-memory it planted, and every planted secret.
func secretLifeCycle(t *testing.T, layout string, recs []secretRecord) (map[string][]byte, []byte, []planted) {
	sinks := map[string][]byte{}
	memory, ps, edit := plantSecrets(t, recs)

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
		planted = append(append(planted, name...), 0)
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
	cmd("intermem-synthesize", "plan", "--max", "0")
	plan := f.planJSON()
	pj, _ := json.Marshal(plan)
	sinks["stdout of intermem-synthesize plan --json"] = pj
	var kept, offered []string
	for _, list := range []string{"candidates", "private"} {
		l, _ := plan[list].([]any)
		for _, c := range l {
			n := jsonNum(c.(map[string]any)["n"])
			if list == "private" {
				kept = append(kept, n)
			} else {
				offered = append(offered, n)
			}
		}
	}
	if len(offered)+len(kept) < len(ps)/3 {
		t.Fatalf("the plan lists %d entries for %d planted secrets", len(offered)+len(kept), len(ps))
	}
	// Every candidate, and (named one by one) the redacted text of every
	// entry kept private, with the last one edited into text with a secret.
	args := []string{"intermem-synthesize", "apply", "--approve", "all", "--import-agents"}
	all := append(append([]string{}, offered...), kept...)
	if len(kept) > 0 {
		args = append(args, "--promote-redacted", strings.Join(kept, ","))
	}
	args = append(args, "--edit", all[len(all)-1]+"="+edit.text)
	cmd(args...)
	for name, want := range originals {
		if !backedUp(t, f, want) && !unchanged(f, name, want) {
			t.Errorf("no backup under .intermem/backups holds the original bytes of %s, and it changed", name)
		}
	}
	checkBackupModes(t, f)
	// Nothing that holds a secret was pruned: every planted copy is still
	// in auto-memory, in its file or as its file's name.
	var mem []byte
	ents, _ := os.ReadDir(f.memDir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(f.memDir, e.Name()))
		mem = append(append(append(mem, e.Name()...), 0), b...)
	}
	for _, p := range ps {
		for _, line := range strings.Split(p.value, "\n") {
			if p.field != fieldEdit && !strings.Contains(string(mem), strings.TrimPrefix(line, "- ")) {
				t.Errorf("apply pruned %s from auto-memory: an entry that holds a secret must stay", p)
				break
			}
		}
	}

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
	return sinks, planted, ps
}

// unchanged reports whether the memory file name still holds exactly want.
func unchanged(f *fixture, name string, want []byte) bool {
	b, err := os.ReadFile(filepath.Join(f.memDir, name))
	return err == nil && string(b) == string(want)
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

// TestLeakIndexHex holds the leak check to what it must tell apart: a hex
// secret written out (whole, or 16 of its digits) is a leak; 8 of its
// digits inside an unrelated hash are not.
func TestLeakIndexHex(t *testing.T) {
	secret := "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"
	ix := newLeakIndex([]planted{{rec: secretRecord{kind: "openrouter-key"}, field: "prose", value: secret, text: "key " + secret}})
	for _, c := range []struct {
		body string
		leak bool
	}{
		{`"sum":"` + "05c389febc7d41e476f9566f894d71aa" + `"`, false},
		{"the key is " + secret, true},
		{"hash 9d2e6f1a3b8c4d7e9f0a1b2c here", true},
		{"HASH 9D2E6F1A3B8C4D7E9F0A1B2C HERE", true},
		{"prefix sk-or-v1-05c3c7d4 only", true},
	} {
		if got := len(ix.leaks([]byte(c.body))) > 0; got != c.leak {
			t.Errorf("%q: leak %v, want %v", c.body, got, c.leak)
		}
	}
}
