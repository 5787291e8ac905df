// Trust boundary, part one: intermem writes only where it may (issue 11,
// items 2–5). Each proof plants what a hostile repository, a careless user
// or a shared machine can put into a project — a forged archive record, a
// link inside .intermem, a CLAUDE.md that links out of the project, a
// session started in the home directory — runs the real binaries as
// processes, and checks byte for byte that nothing outside was written,
// and that the person is told what is wrong and what to do.

package proof

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/project"
)

// runIn runs a binary like fixture.run, from dir instead of the project.
func (f *fixture) runIn(dir, stdin string, extraEnv []string, bin string, args ...string) result {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), args...)
	cmd.Dir = dir
	cmd.Env = f.env(extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("run %s: %v", bin, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// hookPayload is a minimal payload of event for a session and a cwd.
func hookPayload(event, session, cwd string) string {
	extra := ""
	if event == "SessionStart" {
		extra = `,"source":"startup"`
	}
	return fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":%q%s}`, session, cwd, event, extra)
}

// runHooks runs a Stop, a SessionEnd and a SessionStart hook of a fresh
// session in cwd, and a Stop whose payload has no session id (a hook logs
// that), and checks the hook rules: exit 0, nothing on stderr, nothing on
// stdout but from SessionStart. It returns SessionStart's stdout.
func (f *fixture) runHooks(cwd string, extraEnv ...string) string {
	f.t.Helper()
	var start string
	for _, h := range []struct{ bin, stdin string }{
		{"intermem-snapshot", hookPayload("Stop", "trust-1", cwd)},
		{"intermem-snapshot", fmt.Sprintf(`{"cwd":%q,"hook_event_name":"Stop"}`, cwd)},
		{"intermem-snapshot", hookPayload("SessionEnd", "trust-1", cwd)},
		{"intermem-inject", hookPayload("SessionStart", "trust-2", cwd)},
	} {
		r := f.runIn(f.root, h.stdin, extraEnv, h.bin)
		if r.code != 0 || r.stderr != "" {
			f.t.Errorf("%s %s: exit %d, stderr %q; a hook exits 0 and says nothing", h.bin, h.stdin, r.code, r.stderr)
		}
		if h.bin == "intermem-inject" {
			start = r.stdout
		} else if r.stdout != "" {
			f.t.Errorf("%s printed %q on Stop/SessionEnd", h.bin, r.stdout)
		}
	}
	return start
}

// refused checks a command's "intermem: error:" and "intermem: hint:"
// lines against the fragments each must hold.
func refused(t *testing.T, what string, r result, errPart, hintPart string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("%s succeeded; it must refuse\nstdout:\n%s", what, r.stdout)
		return
	}
	var errLine, hintLine string
	for _, l := range strings.Split(r.stderr, "\n") {
		if s, ok := strings.CutPrefix(l, "intermem: error: "); ok && errLine == "" {
			errLine = s
		}
		if s, ok := strings.CutPrefix(l, "intermem: hint: "); ok && hintLine == "" {
			hintLine = s
		}
	}
	if !strings.Contains(errLine, errPart) {
		t.Errorf("%s: error %q does not say %q\nstderr:\n%s", what, errLine, errPart, r.stderr)
	}
	if !strings.Contains(hintLine, hintPart) {
		t.Errorf("%s: hint %q does not say %q\nstderr:\n%s", what, hintLine, hintPart, r.stderr)
	}
}

// snapshotDir maps every entry below dir (files, directories, links) to
// its content, link target or "dir", with its mode: the state a proof
// requires unchanged.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return nil
		}
		v := info.Mode().String() + " "
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			v += "-> " + target
		case d.IsDir():
			v += "dir"
		default:
			b, _ := os.ReadFile(path)
			v += string(b)
		}
		out[rel] = v
		return nil
	})
	return out
}

func sameDir(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s changed: %q, was %q", what, k, clip(got[k]), clip(v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s appeared: %q", what, k, clip(v))
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

const bashrc = "# ~/.bashrc\nexport PATH=\"$HOME/bin:$PATH\"\n"

// TestTrustRestoreTraversal: the archive is a committed file, so its
// records are hostile input. A record whose "from:" climbs out of
// docs/intermem must never be written back there: neither by
// "intermem restore ID" nor by sweep's automatic restore, which takes any
// archived fact auto-memory holds again.
func TestTrustRestoreTraversal(t *testing.T) {
	t.Parallel()
	fact := "- Run `make setup` before the first build."
	f := newFixture(t, map[string]string{"AGENTS.md": "# Guide\n\n## Build\n\n- Builds are reproducible.\n"},
		map[string]string{"MEMORY.md": "# Memory\n\n## Build\n" + fact + "\n"})
	f.layout = "flat"
	f.write(filepath.Join(f.home, ".bashrc"), bashrc)
	mem, err := automem.Scan(f.memDir)
	if err != nil || len(mem.Entries()) != 1 {
		t.Fatalf("memory: %v, %d entries", err, len(mem.Entries()))
	}
	id := mem.Entries()[0].ID // auto-memory holds the archived fact again
	from := "docs/intermem/../../../home/.bashrc"
	archive := "# Archived facts\n\nintro\n\n## " + id + "\n\n- archived: 2026-10-01T00:00:00Z\n- from: " + from +
		" § Shell\n- reason: stale\n\n~~~~ markdown\n" + fact + "\n~~~~\n"
	f.write(filepath.Join(f.root, "docs", "intermem", ".archived.md"), archive)
	before := f.tree()

	untouched := func(after string) {
		t.Helper()
		if b, _ := os.ReadFile(filepath.Join(f.home, ".bashrc")); string(b) != bashrc {
			t.Fatalf("~/.bashrc was written by %s:\n%s", after, b)
		}
	}
	r := f.run("", nil, "intermem", "restore", id)
	untouched("intermem restore")
	refused(t, "intermem restore of a record from "+from, r,
		fmt.Sprintf("archived fact %s (line 5 of docs/intermem/.archived.md) came from %q", id, from),
		"correct its from: line")
	r = f.run("", nil, "intermem", "restore", id, "--allow-outside")
	untouched("intermem restore --allow-outside")
	refused(t, "intermem restore --allow-outside of a record from "+from, r, "which names no document intermem restores into", "from:")

	for _, args := range [][]string{{"sweep"}, {"sweep", "--allow-outside"}} {
		r = f.run("", nil, "intermem", args...)
		untouched("intermem " + strings.Join(args, " "))
		if r.code != 0 || !strings.Contains(r.stdout, "refused") || !strings.Contains(r.stdout, id) {
			t.Errorf("intermem %s: exit %d; it must go on and say it refused %s:\n%s%s", strings.Join(args, " "), r.code, id, r.stdout, r.stderr)
		}
	}
	diffTrees(t, "after restore and sweep of a forged record", f.tree(), before)
}

// TestTrustStateDirLinks: everything in .intermem must be a real file or
// directory of the user's. A planted link there makes every hook log one
// line (or none, when the log itself is the link) and do nothing else,
// and every command stop with an error naming the link to remove; nothing
// is written, moved, deleted or chmodded through it.
func TestTrustStateDirLinks(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, map[string]string{"CLAUDE.md": "# Project\n\nBe brief.\n"},
			map[string]string{"MEMORY.md": "# Memory\n\n## Rules\n- Never push to main.\n- A file name planted to be quoted: `; rm -rf ~`\n"})
		f.write(filepath.Join(f.home, ".bashrc"), bashrc)
		if err := os.Mkdir(filepath.Join(f.root, ".intermem"), 0o700); err != nil {
			t.Fatal(err)
		}
		return f
	}
	commands := [][]string{
		{"intermem", "status"},
		{"intermem", "sweep"},
		{"intermem-synthesize", "plan"},
		{"intermem-recover", "--resume"},
	}

	t.Run("log-links-to-bashrc", func(t *testing.T) {
		f := setup(t)
		symlink(t, filepath.Join(f.home, ".bashrc"), filepath.Join(f.root, ".intermem", "log"))
		f.runHooks(f.root)
		for _, c := range commands {
			refused(t, strings.Join(c, " "), f.run("", nil, c[0], c[1:]...),
				".intermem/log is a symlink to "+filepath.Join(f.home, ".bashrc"),
				"remove the symlink .intermem/log; intermem keeps its state in real files")
		}
		if b, _ := os.ReadFile(filepath.Join(f.home, ".bashrc")); string(b) != bashrc {
			t.Errorf("~/.bashrc was written through .intermem/log:\n%s", b)
		}
		if exists(f.storePath()) {
			t.Error("a hook or command created the store in a state directory holding a link")
		}
	})

	t.Run("spool-links-outside", func(t *testing.T) {
		f := setup(t)
		outside := filepath.Join(f.dir, "elsewhere")
		f.write(filepath.Join(outside, "00000000001761987600-1.json"),
			`{"session_id":"planted","at":"2026-11-01T09:00:00Z","fp":"x","files":["MEMORY.md"],"entries":[]}`)
		f.write(filepath.Join(outside, "unreadable.json"), "not an observation")
		f.write(filepath.Join(outside, "notes.txt"), "the user's notes\n")
		want := snapshotDir(t, outside)
		symlink(t, outside, filepath.Join(f.root, ".intermem", "spool"))
		f.runHooks(f.root)
		log, _ := os.ReadFile(filepath.Join(f.root, ".intermem", "log"))
		if !strings.Contains(string(log), "skipped") || !strings.Contains(string(log), ".intermem/spool is a symlink") {
			t.Errorf("the log does not say the hooks skipped for the linked spool:\n%s", log)
		}
		for _, c := range commands {
			refused(t, strings.Join(c, " "), f.run("", nil, c[0], c[1:]...),
				".intermem/spool is a symlink to "+outside,
				"remove the symlink .intermem/spool; intermem keeps its state in real files")
		}
		sameDir(t, "the directory .intermem/spool links to", snapshotDir(t, outside), want)
	})

	t.Run("state-dir-links-to-a-shared-dir", func(t *testing.T) {
		f := setup(t)
		shared := filepath.Join(f.dir, "shared")
		f.write(filepath.Join(shared, "README"), "a directory other people use\n")
		if err := os.Chmod(shared, 0o755); err != nil {
			t.Fatal(err)
		}
		want := snapshotDir(t, shared)
		os.Remove(filepath.Join(f.root, ".intermem"))
		symlink(t, shared, filepath.Join(f.root, ".intermem"))
		f.runHooks(f.root)
		for _, c := range commands {
			refused(t, strings.Join(c, " "), f.run("", nil, c[0], c[1:]...),
				".intermem is a symlink to "+shared,
				"remove the symlink .intermem; intermem keeps its state in real files")
		}
		sameDir(t, "the shared directory .intermem links to", snapshotDir(t, shared), want)
		if st, err := os.Stat(shared); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("the shared directory's mode changed: %v", st.Mode())
		}
	})

	t.Run("dangling-write-lock", func(t *testing.T) {
		f := setup(t)
		keys := filepath.Join(f.home, ".ssh", "authorized_keys")
		if err := os.MkdirAll(filepath.Dir(keys), 0o700); err != nil {
			t.Fatal(err)
		}
		symlink(t, keys, filepath.Join(f.root, ".intermem", "write.lock"))
		for _, c := range commands {
			refused(t, strings.Join(c, " "), f.run("", nil, c[0], c[1:]...),
				".intermem/write.lock is a symlink to "+keys,
				"remove the symlink .intermem/write.lock")
		}
		f.runHooks(f.root)
		if exists(keys) {
			t.Errorf("%s was created through .intermem/write.lock", keys)
		}
	})
}

// TestTrustSymlinkedTargets: a CLAUDE.md that is a dangling link to
// ../home/.profile is not "no CLAUDE.md". plan names where it leads, apply
// refuses to write there (creating ~/.profile) unless --allow-outside, and
// then the journaled operation carries the permission. A link that stays
// inside the project is written through as before.
func TestTrustSymlinkedTargets(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, claudeLink string) *fixture {
		f := newFixture(t, map[string]string{"AGENTS.md": "# Guide\n\n## Architecture\n\n- Handlers live in `internal/http`.\n"},
			map[string]string{"MEMORY.md": "# Memory\n\n## Rules\n- Never push to main directly.\n- Always run the linter before pushing.\n"})
		f.layout = "flat"
		symlink(t, claudeLink, filepath.Join(f.root, "CLAUDE.md"))
		f.sessions(3)
		return f
	}

	t.Run("dangling-link-outside", func(t *testing.T) {
		f := setup(t, "../home/.profile")
		profile := filepath.Join(f.home, ".profile")
		plan := f.must("intermem-synthesize", "plan").stdout
		want := "CLAUDE.md is a dangling link to " + profile + ", outside this project: apply refuses unless --allow-outside"
		if !strings.Contains(plan, want) {
			t.Errorf("plan does not say %q:\n%s", want, plan)
		}
		if strings.Contains(plan, "there is no CLAUDE.md") {
			t.Errorf("plan calls a dangling link \"no CLAUDE.md\":\n%s", plan)
		}
		if status := f.must("intermem", "status").stdout; !strings.Contains(status, want) {
			t.Errorf("status does not say %q:\n%s", want, status)
		}
		before := f.tree()
		for _, args := range [][]string{{"apply", "--approve", "all", "--import-agents"}, {"apply", "--approve", "all", "--import-agents", "--dry-run"}} {
			refused(t, "intermem-synthesize "+strings.Join(args, " "), f.run("", nil, "intermem-synthesize", args...),
				"CLAUDE.md is a dangling link to "+profile+", outside this project: apply refuses to write there",
				"pass --allow-outside to write through the link anyway")
		}
		if exists(profile) {
			t.Fatalf("apply created %s", profile)
		}
		diffTrees(t, "after a refused apply", f.tree(), before)

		f.must("intermem-synthesize", "apply", "--approve", "all", "--import-agents", "--allow-outside")
		b, err := os.ReadFile(profile)
		if err != nil || !strings.Contains(string(b), "Never push to main directly.") {
			t.Errorf("with --allow-outside the fact goes through the link: %q, %v", b, err)
		}
		allowed := 0
		for _, op := range f.journalOps() {
			if op.Kind == "promote" && op.AllowOutside {
				allowed++
			}
		}
		if allowed != 1 {
			t.Errorf("%d promote operations carry AllowOutside, want 1", allowed)
		}
	})

	t.Run("link-inside-the-project", func(t *testing.T) {
		f := setup(t, "docs/CLAUDE.md") // dangling, but inside
		f.must("intermem-synthesize", "plan")
		f.must("intermem-synthesize", "apply", "--approve", "all", "--import-agents")
		b, err := os.ReadFile(filepath.Join(f.root, "docs", "CLAUDE.md"))
		if err != nil || !strings.Contains(string(b), "Never push to main directly.") {
			t.Errorf("a link inside the project is written through: %q, %v", b, err)
		}
		if target, err := os.Readlink(filepath.Join(f.root, "CLAUDE.md")); err != nil || target != "docs/CLAUDE.md" {
			t.Errorf("CLAUDE.md is no longer the link: %q, %v", target, err)
		}
	})
}

// TestTrustRestoreThroughLink: a fact archived from CLAUDE.md is not
// restored through a CLAUDE.md that has since become a link out of the
// project, by intermem restore or by sweep, unless --allow-outside.
func TestTrustRestoreThroughLink(t *testing.T) {
	t.Parallel()
	fact := "- Deploys go through `make release`."
	f := newFixture(t, map[string]string{"AGENTS.md": "# Guide\n"},
		map[string]string{"MEMORY.md": "# Memory\n\n## Release\n" + fact + "\n"})
	f.layout = "flat"
	mem, err := automem.Scan(f.memDir)
	if err != nil || len(mem.Entries()) != 1 {
		t.Fatalf("memory: %v", err)
	}
	id := mem.Entries()[0].ID
	f.write(filepath.Join(f.root, "docs", "intermem", ".archived.md"), "# Archived facts\n\n## "+id+
		"\n\n- archived: 2026-10-01T00:00:00Z\n- from: CLAUDE.md § Release\n- reason: stale\n\n~~~~ markdown\n"+fact+"\n~~~~\n")
	symlink(t, "../home/.profile", filepath.Join(f.root, "CLAUDE.md"))
	profile := filepath.Join(f.home, ".profile")
	for _, c := range [][]string{{"restore", id}, {"sweep"}} {
		refused(t, "intermem "+strings.Join(c, " "), f.run("", nil, "intermem", c...),
			"CLAUDE.md is a dangling link to "+profile+", outside this project: "+c[0]+" refuses to write there",
			"pass --allow-outside")
	}
	if exists(profile) {
		t.Fatalf("%s was created", profile)
	}
	f.must("intermem", "restore", id, "--allow-outside")
	if b, _ := os.ReadFile(profile); !strings.Contains(string(b), "make release") {
		t.Errorf("restore --allow-outside did not write through the link: %q", b)
	}
}

// TestTrustNoProject: a session or a command in the home directory or at
// / is in no project. Commands refuse with a hint and create nothing;
// hooks do nothing at all (no state directory, no log, not even in
// CLAUDE_PLUGIN_DATA). A home directory that is a git repository is a
// project like any other.
func TestTrustNoProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.write(filepath.Join(f.home, "CLAUDE.md"), "# Me\n")
	f.write(filepath.Join(f.home, ".claude", "projects", project.Encode(f.home), "memory", "MEMORY.md"),
		"# Memory\n\n## Rules\n- Stable fact one.\n")
	data := filepath.Join(f.dir, "plugin-data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"intermem-synthesize", "plan"}, {"intermem", "status"}, {"intermem", "sweep"}, {"intermem-recover", "--resume"}} {
		refused(t, strings.Join(c, " ")+" in the home directory", f.runIn(f.home, "", nil, c[0], c[1:]...),
			"not inside a project: "+f.home+" is your home directory", "run intermem inside a project")
	}
	refused(t, "intermem status --project /", f.run("", nil, "intermem", "status", "--project", "/"),
		"not inside a project: / is the filesystem root", "run intermem inside a project")
	if out := f.runHooks(f.home, "CLAUDE_PLUGIN_DATA="+data); out != "" {
		t.Errorf("SessionStart in the home directory injected %q", out)
	}
	if exists(filepath.Join(f.home, ".intermem")) {
		t.Error("a state directory was created in the home directory")
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Errorf("a hook in the home directory logged to CLAUDE_PLUGIN_DATA: %v", ents)
	}

	// A home directory kept in git is a project.
	if err := os.Mkdir(filepath.Join(f.home, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := f.runIn(f.home, "", nil, "intermem-synthesize", "plan"); r.code != 0 {
		t.Errorf("plan in a home directory that is a git repository: exit %d\n%s", r.code, r.stderr)
	}
	if !exists(filepath.Join(f.home, ".intermem")) {
		t.Error("no state directory in a home directory that is a git repository")
	}
}
