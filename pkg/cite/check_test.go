package cite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture builds a small real git project:
//
//	commit 1: pkg/store/db.go, pkg/a/util.go, pkg/old/legacy.go, olddir/{x,y}.go,
//	          docs/guide.md, src/app/main.py, services/api/cmd/tool/main.go, ...
//	commit 2: git mv pkg/a/util.go pkg/b/helpers.go; git mv olddir newdir
//	commit 3: git rm pkg/old/legacy.go; git mv pkg/b/helpers.go pkg/c/helpers.go
//
// plus, uncommitted: a symlink escaping the root, a symlink inside it, a
// dangling symlink and a directory with a file-like name.
func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	root = t.TempDir()
	outside = t.TempDir()
	files := map[string]string{
		"pkg/store/db.go":               "package store\n\n// Open opens the store.\nfunc Open(path string) error { return nil }\n",
		"pkg/a/util.go":                 "package a\n\n// Clamp bounds x.\nfunc Clamp(x int) int { return x }\n",
		"pkg/old/legacy.go":             "package old\n\nfunc Run() {}\n",
		"olddir/x.go":                   "package olddir\n\n// x file with some content\n",
		"olddir/y.go":                   "package olddir\n\n// y file with other content\n",
		"docs/guide.md":                 "# Guide\n",
		"src/app/main.py":               "print('hi')\n",
		"services/api/cmd/tool/main.go": "package main\n\nfunc main() {}\n",
		"fixtures.json/readme.txt":      "a directory named like a file\n",
		".github/workflows/ci.yml":      "on: push\n",
		"Makefile":                      "all:\n",
	}
	for name, content := range files {
		writeFile(t, root, name, content)
	}
	git(t, root, "init", "-q")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "one")
	if err := os.MkdirAll(filepath.Join(root, "pkg", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "mv", "pkg/a/util.go", "pkg/b/helpers.go")
	git(t, root, "mv", "olddir", "newdir")
	git(t, root, "commit", "-q", "-m", "two")
	git(t, root, "rm", "-q", "pkg/old/legacy.go")
	if err := os.MkdirAll(filepath.Join(root, "pkg", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "mv", "pkg/b/helpers.go", "pkg/c/helpers.go")
	git(t, root, "commit", "-q", "-m", "three")

	writeFile(t, outside, "secret.txt", "outside the project\n")
	symlink(t, outside, filepath.Join(root, "escape"))
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "docs", "secret.txt"))
	symlink(t, "pkg/store/db.go", filepath.Join(root, "db-link.go"))
	symlink(t, "nothere.md", filepath.Join(root, "docs", "dangling.md"))
	return root, outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFixture(t *testing.T) {
	root, outside := fixture(t)
	tests := []struct {
		entry   string
		text    string
		kind    Kind
		status  Status
		movedTo string
	}{
		{"- The store lives in `pkg/store/db.go`.", "pkg/store/db.go", File, Valid, ""},
		{"- Legacy runner: `pkg/old/legacy.go`.", "pkg/old/legacy.go", File, Broken, ""},
		{"- Clamp is in pkg/a/util.go.", "pkg/a/util.go", File, Moved, "pkg/c/helpers.go"},
		{"- Helpers: `pkg/b/helpers.go`.", "pkg/b/helpers.go", File, Moved, "pkg/c/helpers.go"},
		{"- Bare name of a renamed file: `util.go`.", "util.go", File, Moved, "pkg/c/helpers.go"},
		{"- Bare name of a deleted file: `legacy.go`.", "legacy.go", File, Broken, ""},
		{"- Bare name found below the root: `db.go`.", "db.go", File, Valid, ""},
		{"- Bare name never in this project: `.env`.", ".env", Path, Unchecked, ""},
		{"- Old layout: `olddir/`.", "olddir/", Dir, Moved, "newdir"},
		{"- Store package: the pkg/store/ directory.", "pkg/store/", Dir, Valid, ""},
		{"- Store package: `pkg/store`.", "pkg/store", Path, Valid, ""},
		{"- Missing dir: `pkg/nothere/`.", "pkg/nothere/", Dir, Broken, ""},
		{"- Missing file in an existing dir: `docs/missing.md`.", "docs/missing.md", File, Broken, ""},
		{"- A file cited as a directory: `docs/guide.md/`.", "docs/guide.md/", Dir, Broken, ""},
		{"- A directory cited as a file: `fixtures.json`.", "fixtures.json", File, Broken, ""},
		{"- Python sources: `src/**/*.py`.", "src/**/*.py", Glob, Valid, ""},
		{"- Rust sources: `src/**/*.rs`.", "src/**/*.rs", Glob, Broken, ""},
		{"- Glob under a missing top-level dir: `lib/**/*.rb`.", "lib/**/*.rb", Glob, Unchecked, ""},
		{"- Entry point at `src/app/main.py:42`.", "src/app/main.py:42", File, Valid, ""},
		{"- Entry point at src/app/main.py#L10.", "src/app/main.py#L10", File, Valid, ""},
		{"- Deleted with a line: `pkg/old/legacy.go:3`.", "pkg/old/legacy.go:3", File, Broken, ""},
		{"- `Open()` in `pkg/store/db.go` opens it.", "Open()", Symbol, Valid, ""},
		{"- `Close()` in `pkg/store/db.go` closes it.", "Close()", Symbol, Broken, ""},
		{"- `Run()` in `pkg/old/legacy.go` runs it.", "Run()", Symbol, Broken, ""},
		{"- `Clamp()` in `pkg/a/util.go` bounds x.", "Clamp()", Symbol, Moved, "pkg/c/helpers.go"},
		{"- Escaping symlink: `escape/secret.txt`.", "escape/secret.txt", File, Unchecked, ""},
		{"- Escaping file symlink: `docs/secret.txt`.", "docs/secret.txt", File, Unchecked, ""},
		{"- Inside symlink: `db-link.go`.", "db-link.go", File, Valid, ""},
		{"- Dangling symlink: `docs/dangling.md`.", "docs/dangling.md", File, Broken, ""},
		{"- Parent: `../outside/secret.txt`.", "../outside/secret.txt", File, Unchecked, ""},
		{"- Escape via dots: `pkg/../../x.go`.", "pkg/../../x.go", File, Unchecked, ""},
		{"- Subproject path: `cmd/tool/main.go`.", "cmd/tool/main.go", File, Valid, ""},
		{"- Root-relative: `/pkg/store/db.go`.", "/pkg/store/db.go", File, Valid, ""},
		{"- Root-relative, gone: `/pkg/old/legacy.go`.", "/pkg/old/legacy.go", File, Broken, ""},
		{"- Route: `/api/users.json`.", "/api/users.json", File, Unchecked, ""},
		{"- Repository slug: `acme/widgets`.", "acme/widgets", Path, Unchecked, ""},
		{"- CI: `.github/workflows/ci.yml`.", ".github/workflows/ci.yml", File, Valid, ""},
		{"- Build: `Makefile`.", "Makefile", File, Valid, ""},
		{"- Home config: `~/.codex/config.toml`.", "~/.codex/config.toml", File, Unchecked, ""},
		{"- System file: /etc/hosts.", "/etc/hosts", Path, Unchecked, ""},
		{"- Absolute temp file: `" + filepath.ToSlash(outside) + "/secret.txt`.", filepath.ToSlash(outside) + "/secret.txt", File, Unchecked, ""},
	}
	c := NewChecker(root)
	for _, tt := range tests {
		cs := Extract(tt.entry)
		var found *Citation
		for i := range cs {
			if cs[i].Text == tt.text {
				found = &cs[i]
			}
		}
		if found == nil {
			t.Errorf("%s: %q not extracted; got %+v", tt.entry, tt.text, cs)
			continue
		}
		if found.Kind != tt.kind {
			t.Errorf("%s: kind %s, want %s", tt.entry, found.Kind, tt.kind)
		}
		r := c.Check([]Citation{*found})[0]
		if r.Status != tt.status || r.MovedTo != tt.movedTo {
			t.Errorf("%s: %q → %s %q (%s), want %s %q", tt.entry, tt.text, r.Status, r.MovedTo, r.Detail, tt.status, tt.movedTo)
		}
		if r.Detail == "" {
			t.Errorf("%s: empty detail", tt.entry)
		}
	}
}

// TestCheckNoGit: without a repository, deletions cannot be proven by history;
// a missing path under an existing top-level directory is still broken, a bare
// name that is nowhere is unchecked, and nothing fails.
func TestCheckNoGit(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "pkg/store/db.go", "package store\n")
	c := NewChecker(root)
	rs := c.Check(Extract("- `pkg/store/db.go`, `pkg/store/gone.go`, `gone.go`, `other/x.go`"))
	want := []Status{Valid, Broken, Unchecked, Unchecked}
	if len(rs) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(rs), len(want), rs)
	}
	for i, r := range rs {
		if r.Status != want[i] {
			t.Errorf("%s: %s (%s), want %s", r.Text, r.Status, r.Detail, want[i])
		}
	}
}

// TestCheckLazyGit: git history is loaded only when a citation is missing.
func TestCheckLazyGit(t *testing.T) {
	root, _ := fixture(t)
	c := NewChecker(root)
	c.Check(Extract("- `pkg/store/db.go` and `src/**/*.py`, `Open()` is there"))
	if c.hist != nil {
		t.Fatal("git history loaded although every citation exists")
	}
	c.Check(Extract("- `pkg/old/legacy.go`"))
	if c.hist == nil {
		t.Fatal("git history not loaded for a missing citation")
	}
}

func TestCheckBadRoot(t *testing.T) {
	c := NewChecker(filepath.Join(t.TempDir(), "nope"))
	for _, r := range c.Check(Extract("- `pkg/x.go` and `src/**/*.go`")) {
		if r.Status != Unchecked {
			t.Errorf("%s: %s, want unchecked for a missing root", r.Text, r.Status)
		}
	}
}

func TestCheckable(t *testing.T) {
	cs := Extract("- `~/.claude/settings.json`, `pkg/x.go`, `../y.go`, `docs/`")
	if got := Checkable(cs); got != 2 {
		t.Errorf("Checkable = %d, want 2 (%+v)", got, cs)
	}
}

func TestContainsWord(t *testing.T) {
	data := []byte("func Open() {}\nfunc OpenAll() {}\nvar _open = 1\nπOpenπ Ünïcode")
	for w, want := range map[string]bool{"Open": true, "OpenAll": true, "Ope": false, "open": false, "Clamp": false, "Ünïcode": true, "All": false} {
		if got := containsWord(data, w); got != want {
			t.Errorf("containsWord(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestCheckOwnDirs: intermem's own directories (docs/intermem/, .intermem/)
// are not evidence about the project, on disk or in git history: a docs/
// holding nothing else does not make docs/adr/ broken, a bare name found
// only there is not "found", a glob matching only there matches nothing, a
// flattened detail document deleted in git does not make its base name
// broken elsewhere. A path under them, cited as such, is still judged.
func TestCheckOwnDirs(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "main.go", "package main\n")
	writeFile(t, root, "docs/intermem/build.md", "# Build\n")
	writeFile(t, root, "docs/intermem/old.md", "# Old\n")
	writeFile(t, root, ".intermem/log", "x\n")
	git(t, root, "init", "-q")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "one")
	git(t, root, "rm", "-q", "docs/intermem/old.md")
	git(t, root, "commit", "-q", "-m", "flatten")
	c := NewChecker(root)
	for _, tt := range []struct {
		entry  string
		status Status
	}{
		{"- Decisions: `docs/adr/`.", Unchecked},
		{"- Decisions: `docs/adr/0001-store.md`.", Unchecked},
		{"- Root-relative: `/docs/adr/0001.md`.", Unchecked},
		{"- Docs live in `docs/`.", Unchecked},
		{"- Manual pages: `docs/**/*.md`.", Unchecked},
		{"- The note `build.md`.", Unchecked},
		{"- The note `old.md`.", Unchecked},
		{"- Detail doc: `docs/intermem/build.md`.", Valid},
		{"- Detail docs: `docs/intermem/*.md`.", Valid},
		{"- Flattened: `docs/intermem/old.md`.", Broken},
	} {
		rs := c.Check(Extract(tt.entry))
		if len(rs) != 1 {
			t.Errorf("%s: %d citations, want 1: %+v", tt.entry, len(rs), rs)
			continue
		}
		if rs[0].Status != tt.status {
			t.Errorf("%s: %s (%s), want %s", tt.entry, rs[0].Status, rs[0].Detail, tt.status)
		}
	}
	// A docs/ of the project's own is evidence again.
	writeFile(t, root, "docs/guide.md", "# Guide\n")
	c = NewChecker(root)
	for entry, want := range map[string]Status{"- `docs/adr/`": Broken, "- `docs/`": Valid, "- `docs/**/*.rst`": Broken} {
		if r := c.Check(Extract(entry))[0]; r.Status != want {
			t.Errorf("with docs/guide.md: %s: %s (%s), want %s", entry, r.Status, r.Detail, want)
		}
	}
}

// TestCheckNotInProject: a file, directory or glob under a top-level name the
// project never had is unchecked and marked NotInProject; what is not
// evidently a path (a repository slug, a bare name, a URL route) and what the
// project has or had is not.
func TestCheckNotInProject(t *testing.T) {
	root, _ := fixture(t)
	c := NewChecker(root)
	for entry, want := range map[string]bool{
		"- Invoices use `templates/invoice.html`.":   true,
		"- Partials live in `templates/partials/`.":  true,
		"- Ruby sources: `lib/**/*.rb`.":             true,
		"- Repository slug: `acme/widgets`.":         false,
		"- Bare name: `.env`.":                       false,
		"- Route: `/api/users.json`.":                false,
		"- Gone, but was here: `pkg/old/legacy.go`.": false,
		"- Missing under a real dir: `docs/x.md`.":   false,
		"- Outside: `~/.codex/config.toml`.":         false,
	} {
		rs := c.Check(Extract(entry))
		if len(rs) != 1 {
			t.Fatalf("%s: %d citations", entry, len(rs))
		}
		if rs[0].NotInProject != want {
			t.Errorf("%s: NotInProject = %v (%s %s), want %v", entry, rs[0].NotInProject, rs[0].Status, rs[0].Detail, want)
		}
		if want && (rs[0].Status != Unchecked || !strings.HasPrefix(rs[0].Detail, "not in this project")) {
			t.Errorf("%s: %s %q, want unchecked, not in this project", entry, rs[0].Status, rs[0].Detail)
		}
	}
}

// TestRewrite: moved citations are rewritten to the path that exists now, in
// the form they were written, everywhere they stand as a token; everything
// else is left as it was.
func TestRewrite(t *testing.T) {
	root, _ := fixture(t)
	c := NewChecker(root)
	for _, tt := range []struct{ in, want string }{
		{"- Clamp is in `pkg/a/util.go`; see pkg/a/util.go.", "- Clamp is in `pkg/c/helpers.go`; see pkg/c/helpers.go."},
		{"- Helpers at pkg/b/helpers.go:12 and ./pkg/b/helpers.go.", "- Helpers at pkg/c/helpers.go:12 and ./pkg/c/helpers.go."},
		{"- Old layout: `olddir/` (x.go lives there).", "- Old layout: `newdir/` (x.go lives there)."},
		{"- Bare: `util.go`, not `myutil.go` or util.go.orig.", "- Bare: `pkg/c/helpers.go`, not `myutil.go` or util.go.orig."},
		{"- [helpers](pkg/a/util.go#L3) clamp", "- [helpers](pkg/c/helpers.go#L3) clamp"},
		{"- Root-relative: `/pkg/a/util.go`.", "- Root-relative: `/pkg/c/helpers.go`."},
		{"- `Clamp()` in `pkg/a/util.go` bounds x.", "- `Clamp()` in `pkg/c/helpers.go` bounds x."},
		{"- Valid and deleted: `pkg/store/db.go`, `pkg/old/legacy.go`.", "- Valid and deleted: `pkg/store/db.go`, `pkg/old/legacy.go`."},
	} {
		got, fixes := Rewrite(tt.in, c.Check(Extract(tt.in)))
		if got != tt.want {
			t.Errorf("Rewrite(%q)\n got %q\nwant %q (fixes %+v)", tt.in, got, tt.want, fixes)
		}
		if (got != tt.in) != (len(fixes) > 0) {
			t.Errorf("Rewrite(%q): fixes %+v for a change %v", tt.in, fixes, got != tt.in)
		}
		for _, r := range c.Check(Extract(got)) {
			if r.Status == Moved {
				t.Errorf("Rewrite(%q) = %q still cites moved %s", tt.in, got, r.Text)
			}
		}
		if again, _ := Rewrite(got, c.Check(Extract(got))); again != got {
			t.Errorf("Rewrite is not idempotent: %q → %q", got, again)
		}
	}
}
