package intermem_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
	"github.com/intermem/intermem/pkg/inject"
	"github.com/intermem/intermem/pkg/snapshot"
)

// demo is the sample project of scripts/demo.sh, set up the same way in a
// temporary directory: the project with its two-commit git history (a
// renamed mail sender, a deleted PDF renderer), its auto-memory, and three
// replayed Claude Code sessions.
type demo struct {
	t               *testing.T
	proj, mem, home string
	now             string
}

func newDemo(t *testing.T) *demo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs a real git: %v", err)
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	d := &demo{t: t, proj: filepath.Join(dir, "ledgerline"), mem: filepath.Join(dir, "memory"), home: filepath.Join(dir, "home")}
	copyTree(t, "testdata/demo/project", d.proj)
	copyTree(t, "testdata/demo/memory", d.mem)
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	mv := func(from, to string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(d.proj, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(d.proj, from), filepath.Join(d.proj, to)); err != nil {
			t.Fatal(err)
		}
	}
	mv("internal/mail/smtp.go", "internal/mail/sendgrid.go")
	os.MkdirAll(filepath.Join(d.proj, "internal/render"), 0o755)
	os.WriteFile(filepath.Join(d.proj, "internal/render/pdf.go"), []byte("package render\n"), 0o644)
	d.git("init", "-q")
	d.git("add", ".")
	d.git("commit", "-qm", "ledgerline v0.3")
	d.git("mv", "internal/mail/sendgrid.go", "internal/mail/smtp.go")
	d.git("rm", "-q", "internal/render/pdf.go")
	d.git("commit", "-qm", "Send mail over SMTP; drop the PDF renderer")

	d.sessions()
	return d
}

// sessions replays three Claude Code sessions on three days, as
// scripts/demo.sh does, and sets the clock to the day after.
func (d *demo) sessions() {
	d.t.Helper()
	for day, sid := range []string{"6f1c2a9e-0b1d-4c55-9f1a-3d2b7c8e9a01", "a3e9d4b2-7c61-4f0e-8a2d-5b9c1e6f7d02", "c8b7a6f5-1e2d-4c3b-9a8f-7e6d5c4b3a03"} {
		d.now = fmt.Sprintf("2026-11-0%dT09:00:00Z", day+1)
		d.hook("intermem-inject", sid, `"hook_event_name":"SessionStart","source":"startup"`)
		d.hook("intermem-snapshot", sid, `"hook_event_name":"Stop","stop_hook_active":false`)
		d.hook("intermem-snapshot", sid, `"hook_event_name":"SessionEnd","reason":"other"`)
	}
	d.now = "2026-11-04T09:00:00Z"
}

// newProject is a small project of the given files (path → content),
// committed to git, with the given auto-memory files, after three
// replayed sessions.
func newProject(t *testing.T, files, memory map[string]string) *demo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("this test needs a real git: %v", err)
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	d := &demo{t: t, proj: filepath.Join(dir, "proj"), mem: filepath.Join(dir, "memory"), home: filepath.Join(dir, "home")}
	write := func(root string, fs map[string]string) {
		for name, body := range fs {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(d.proj, files)
	write(d.mem, memory)
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	d.git("init", "-q")
	d.git("add", ".")
	d.git("commit", "-qm", "initial")
	d.sessions()
	return d
}

func (d *demo) git(args ...string) {
	d.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = d.proj
	cmd.Env = append(os.Environ(), "HOME="+d.home, "GIT_CONFIG_GLOBAL="+filepath.Join(d.home, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com", "GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (d *demo) env(stdin string) (*cli.Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	env := cli.New([]string{"HOME=" + d.home, "INTERMEM_MEMORY_DIR=" + d.mem, "INTERMEM_NOW=" + d.now, "PATH=" + os.Getenv("PATH")},
		d.proj, strings.NewReader(stdin), &out, &errb)
	return env, &out, &errb
}

// hook runs a hook binary's Main with a payload.
func (d *demo) hook(bin, sid, fields string) string {
	d.t.Helper()
	env, out, _ := d.env(fmt.Sprintf(`{"session_id":%q,"cwd":%q,%s}`+"\n", sid, d.proj, fields))
	switch bin {
	case "intermem-inject":
		inject.Main(env, nil)
	case "intermem-snapshot":
		snapshot.Main(env, nil)
	}
	return out.String()
}

// run runs a CLI binary's Main and fails the test when it fails.
func (d *demo) run(bin string, args ...string) string {
	d.t.Helper()
	out, errs, code := d.exec(bin, args...)
	if code != 0 {
		d.t.Fatalf("%s %s: exit %d\n%s", bin, strings.Join(args, " "), code, errs)
	}
	return out
}

// exec runs a CLI binary's Main, returning its output and exit code.
func (d *demo) exec(bin string, args ...string) (stdout, stderr string, code int) {
	env, out, errb := d.env("")
	switch bin {
	case "intermem":
		code = command.Main(context.Background(), env, args)
	case "intermem-synthesize":
		code = command.SynthesizeMain(context.Background(), env, args)
	}
	return out.String(), errb.String(), code
}

var sessionStartReady = regexp.MustCompile(`(\d+) (?:memory is|memories are) ready for`)

// glance returns the three answers to "how many entries are ready?" that
// do not check citations: status --json, context --json and the
// SessionStart hook.
func (d *demo) glance() (status, contextN, sessionStart int) {
	d.t.Helper()
	status = int(gjson.Get(d.run("intermem", "status", "--json"), "ready").Int())
	contextN = int(gjson.Get(d.run("intermem", "context", "--json"), "ready").Int())
	out := d.hook("intermem-inject", "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", `"hook_event_name":"SessionStart","source":"startup"`)
	if m := sessionStartReady.FindStringSubmatch(out); m != nil {
		sessionStart, _ = strconv.Atoi(m[1])
	}
	return
}

// counts returns the four answers to "how many entries are ready?":
// status --json, plan --max 0, context --json and the SessionStart hook.
// The three that do not check citations are asked before the plan too,
// and must agree then as well.
func (d *demo) counts(what string) (status, planned, contextN, sessionStart int) {
	d.t.Helper()
	s, c, h := d.glance()
	if s != c || h != c {
		d.t.Errorf("%s, before the plan: status says %d ready, context %d, SessionStart %d", what, s, c, h)
	}
	pl := d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	planned = int(gjson.Get(pl, "candidates.#").Int())
	if got := int(gjson.Get(pl, "ready").Int()); got != planned {
		d.t.Errorf("%s: the plan's own ready %d differs from its %d candidates", what, got, planned)
	}
	status, contextN, sessionStart = d.glance()
	return
}

// TestReadyAgrees: status, the plan, "intermem context" and the
// SessionStart hook tell the same number of entries ready for
// /intermem:synthesize, on the demo project and after an apply (issue:
// the demo's status said 17, SessionStart 13, the plan offered 12).
func TestReadyAgrees(t *testing.T) {
	d := newDemo(t)
	// Before any plan or validation has recorded a verdict, every view
	// judges citations on disk: the memory citing the renamed mail sender
	// counts as broken (git history is read by plan and validate only),
	// so 10 are ready by status, context and SessionStart alike; the
	// first plan sees the rename and offers 11, and says so everywhere.
	if s, c, h := d.glance(); s != 10 || c != 10 || h != 10 {
		t.Errorf("before the first plan: status says %d ready, context %d, SessionStart %d; want 10 each", s, c, h)
	}
	if s, p, c, h := d.counts("the first plan"); s != 11 || p != 11 || c != 11 || h != 11 {
		t.Errorf("after the first plan: status says %d ready, plan --max 0 offers %d, context %d, SessionStart %d; want 11 each", s, p, c, h)
	}
	check := func(what string) int {
		t.Helper()
		s, p, c, h := d.counts(what)
		t.Logf("%s: status %d, plan %d, context %d, SessionStart %d", what, s, p, c, h)
		if s != p || c != p || h != p || p == 0 {
			t.Errorf("%s: status says %d ready, plan --max 0 offers %d, context says %d, SessionStart %d", what, s, p, c, h)
		}
		return p
	}
	before := check("the demo")

	// Approve all (the credentials are kept private, not covered), with
	// the import the plan asks for.
	pl := d.run("intermem-synthesize", "plan", "--json")
	if gjson.Get(pl, `private.#(text%"*mailer credentials*").n`).String() == "" {
		t.Fatalf("the credentials are not kept private in the plan:\n%s", pl)
	}
	d.run("intermem-synthesize", "apply", "--approve", "all", "--import-agents")
	after := check("after an apply")
	if after >= before {
		t.Errorf("ready went from %d to %d after approving all but one", before, after)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadyAgreesDocumented: a memory entry a solution document of the
// project already says is offered for pruning, "documented in" it, and
// every count of what is ready still agrees (a documented entry is as
// ready as the promotion it replaces, so SessionStart, which does not
// read solution documents, counts it the same).
func TestReadyAgreesDocumented(t *testing.T) {
	d := newDemo(t)
	_, before, _, _ := d.counts("the demo")
	doc := filepath.Join(d.proj, "docs", "solutions", "test-failures", "golden-files-drift-20261101.md")
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte(`---
module: invoice
date: 2026-11-01
problem_type: test_failure
tags: [golden, tests]
---

# Golden files drift after a template change

## Solution
Golden files live in `+"`internal/invoice/testdata/`"+`; regenerate them with `+"`go test ./internal/invoice -update`"+` and review the diff before committing, because a regenerated golden file can hide a real change.
`), 0o644); err != nil {
		t.Fatal(err)
	}
	pl := d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	c := gjson.Get(pl, `candidates.#(text%"*Golden files live*")`)
	if c.Get("action").String() != "prune" || c.Get("documented_in").String() != "docs/solutions/test-failures/golden-files-drift-20261101.md" {
		t.Errorf("the golden-files entry is not offered for pruning as documented: %s", c.Raw)
	}
	s, p, ctx, h := d.counts("with a solution document")
	t.Logf("with a solution document: status %d, plan %d, context %d, SessionStart %d", s, p, ctx, h)
	if s != p || ctx != p || h != p || p != before {
		t.Errorf("status says %d ready, plan --max 0 offers %d, context says %d, SessionStart %d; %d before the document", s, p, ctx, h, before)
	}
}

// TestReadyAgreesWritten: memories written through intermem are offered
// like auto-memory entries, and every count of what is ready agrees with
// the plan: one citing a file that exists is ready, one citing a file
// that never existed is blocked as stale, and one promoted leaves every
// count.
func TestReadyAgreesWritten(t *testing.T) {
	d := newDemo(t)
	_, before, _, _ := d.counts("the demo")
	d.run("intermem", "write", "--type", "decision", "--title", "Money is integer cents",
		"--content", "Amounts are int64 cents; never floats.", "--file", "internal/invoice/money.go")
	d.run("intermem", "write", "--type", "learning", "--title", "The PDF cache",
		"--content", "Rendered PDFs are cached in `internal/render/cache.go`.")
	check := func(what string, want int) {
		t.Helper()
		s, p, c, h := d.counts(what)
		t.Logf("%s: status %d, plan %d, context %d, SessionStart %d", what, s, p, c, h)
		if s != want || p != want || c != want || h != want {
			t.Errorf("%s: status says %d ready, plan --max 0 offers %d, context says %d, SessionStart %d; want %d", what, s, p, c, h, want)
		}
	}
	check("with two written memories", before+1)
	pl := d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	c := gjson.Get(pl, `candidates.#(title=="Money is integer cents")`)
	if c.Get("source").String() != "written" || c.Get("type").String() != "decision" || c.Get("confidence").Float() != 0.8 {
		t.Fatalf("the written decision is not offered as written: %s", c.Raw)
	}
	if b := gjson.Get(pl, `blocked.#(text%"*PDF cache*").reason`).String(); !strings.Contains(b, "internal/render/cache.go") {
		t.Errorf("the written memory citing a missing file is not blocked for it: %q", b)
	}
	n := c.Get("n").String()
	d.run("intermem-synthesize", "apply", "--approve", n, "--target", n+"=CLAUDE.md")
	check("after promoting it", before)
	if t.Failed() {
		t.Log(d.run("intermem-synthesize", "plan", "--max", "0"))
	}
}

// TestReadyAgreesPointers: an index line pointing to a topic file that
// does not exist is the memory itself, judged by its citations alike
// everywhere (issue: SessionStart and context counted one citing a
// missing directory as ready, status and the plan blocked it as stale);
// one pointing to a topic file that exists is an index line, counted
// alike by sources, validate, status and the plan.
func TestReadyAgreesPointers(t *testing.T) {
	d := newProject(t, map[string]string{"src/a.go": "package src\n"}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Notes\n" +
			"- [LSP shipped](session_lsp.md) - the server gains src/lsp/ with a manager\n" +
			"- [Style](feedback_style.md) — terse reviews\n" +
			"- Handlers live in `src/a.go` and never block.\n" +
			"\n## Again\n- Handlers live in `src/a.go` and never block.\n",
		"feedback_style.md": "---\nname: Style\ndescription: terse reviews\ntype: feedback\n---\nReviews are terse and cite file:line.\n",
	})
	if s, c, h := d.glance(); s != 2 || c != 2 || h != 2 {
		t.Errorf("before the first plan: status says %d ready, context %d, SessionStart %d; want 2 each", s, c, h)
	}
	if s, p, c, h := d.counts("the first plan"); s != 2 || p != 2 || c != 2 || h != 2 {
		t.Errorf("after the first plan: status says %d ready, plan --max 0 offers %d, context %d, SessionStart %d; want 2 each", s, p, c, h)
	}
	pl := d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	if b := gjson.Get(pl, `blocked.#(text%"*LSP shipped*").reason`).String(); !strings.Contains(b, "src/lsp") {
		t.Errorf("the orphan pointer citing a missing directory is not blocked for it: %q", b)
	}
	// Three entries: the fact (its copy is the same entry), the orphan
	// pointer, the topic file; the line pointing to the topic file is not
	// one.
	st := d.run("intermem", "status", "--json")
	n := map[string]int64{
		"sources":  gjson.Get(d.run("intermem", "sources", "--json"), `sources.#(name=="auto-memory").entries`).Int(),
		"validate": gjson.Get(d.validate("--source", "auto-memory"), "checked").Int(),
		"status":   gjson.Get(st, "entries").Int(),
		"plan":     gjson.Get(pl, "entries").Int(),
	}
	for what, got := range n {
		if got != 3 {
			t.Errorf("%s counts %d auto-memory entries, want 3 (all: %v)", what, got, n)
		}
	}
	if p := gjson.Get(st, "pointers").Int(); p != 1 {
		t.Errorf("status counts %d index lines pointing to topic files, want 1", p)
	}
}

// validate runs "intermem validate --json" with args, which exits 1 when
// it finds a stale entry, and returns its report.
func (d *demo) validate(args ...string) string {
	d.t.Helper()
	out, errs, code := d.exec("intermem", append([]string{"validate", "--json"}, args...)...)
	if code != 0 && code != 1 {
		d.t.Fatalf("intermem validate %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// TestValidateChecksEveryEntry: validate checks every entry of a source,
// one citing nothing as citing nothing checkable, and every view then says
// so (issue: the demo's "validate --source instructions" checked 2 of its
// 7 entries, and search said "not validated yet" of the others forever).
func TestValidateChecksEveryEntry(t *testing.T) {
	d := newDemo(t)
	doc := filepath.Join(d.proj, "docs", "solutions", "process", "release-freeze.md")
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("---\nmodule: release\nproblem_type: process\n---\n\n# Releases slipped\n\n## Solution\nFreeze merges the day before a release.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := d.run("intermem", "sources", "--json")
	for _, name := range []string{"instructions", "compound"} {
		want := gjson.Get(src, `sources.#(name=="`+name+`").entries`).Int()
		rep := d.validate("--source", name)
		if got := gjson.Get(rep, "checked").Int(); got != want || want == 0 {
			t.Errorf("validate --source %s checked %d entries; sources says it holds %d", name, got, want)
		}
	}
	res := d.run("intermem", "search", "dependency", "--json")
	hit := gjson.Get(res, `results.#(path=="CLAUDE.md")`)
	if hit.Get("status").String() != "unchecked" {
		t.Errorf("after validate, search says of CLAUDE.md's uncited statement: %s\n%s", hit.Raw, res)
	}
	if out := d.run("intermem", "search", "dependency"); strings.Contains(out, "not validated yet") {
		t.Errorf("after validate, search still says \"not validated yet\":\n%s", out)
	}
}

// TestReadyAgreesHandMarkers: markers typed by hand are no promotion of
// an entry no document says, and an id tagging two lines is reported
// (issue: a marker carrying an auto-memory entry's id on other text
// counted the entry as promoted; a second line tagged with one id vanished
// with no problem told).
func TestReadyAgreesHandMarkers(t *testing.T) {
	d := newProject(t, map[string]string{"src/a.go": "package src\n",
		"docs/solutions/process/freeze.md": "---\nmodule: release\n---\n\n# Releases slipped\n\n## Solution\nFreeze merges the day before a release.\n",
	}, map[string]string{
		"MEMORY.md": "# Memory\n\n## Notes\n- Handlers live in `src/a.go` and never block.\n- Release builds are static.\n",
	})
	solution := gjson.Get(d.run("intermem", "search", "freeze merges", "--json"), `results.#(source=="compound").id`).String()
	if solution == "" {
		t.Fatal("search does not find the solution document")
	}
	pl := d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	handlers := gjson.Get(pl, `candidates.#(text%"*Handlers live*").id`).String()
	release := gjson.Get(pl, `candidates.#(text%"*Release builds*").id`).String()
	if handlers == "" || release == "" {
		t.Fatalf("the two facts are not offered:\n%s", pl)
	}
	claude := "# Project\n\n## Notes\n\n" +
		"- Something else entirely. <!-- intermem:" + handlers + " -->\n" +
		"- Release builds are static. <!-- intermem:" + release + " -->\n" +
		"- One. <!-- intermem:aaaaaaaaaaaaaaaa -->\n" +
		"- Two. <!-- intermem:aaaaaaaaaaaaaaaa -->\n" +
		"- Freeze merges before releases. <!-- intermem:" + solution + " -->\n"
	if err := os.WriteFile(filepath.Join(d.proj, "CLAUDE.md"), []byte(claude), 0o644); err != nil {
		t.Fatal(err)
	}
	s, p, c, h := d.counts("with hand-written markers")
	if s != 1 || p != 1 || c != 1 || h != 1 {
		t.Errorf("status says %d ready, plan --max 0 offers %d, context %d, SessionStart %d; want 1 each (the handlers fact, which no document says)", s, p, c, h)
	}
	pl = d.run("intermem-synthesize", "plan", "--max", "0", "--json")
	if gjson.Get(pl, `candidates.#(id=="`+handlers+`")`).Raw == "" || gjson.Get(pl, "skipped_promoted").Int() != 1 {
		t.Errorf("the handlers fact is not offered, or not the release fact alone is skipped as promoted:\n%s", pl)
	}
	probs := gjson.Get(d.run("intermem", "sources", "--json"), `sources.#(name=="promoted").problems`)
	if !strings.Contains(probs.Raw, "aaaaaaaaaaaaaaaa also tags line 7") {
		t.Errorf("sources reports no problem of the id tagging two lines: %s", probs.Raw)
	}
	if !strings.Contains(probs.Raw, solution+" carries the id of a compound entry") {
		t.Errorf("sources reports no problem of the marker carrying the solution document's id: %s", probs.Raw)
	}
}
