package cite

import (
	"reflect"
	"strings"
	"testing"
)

func cf(text, path string, kind Kind) Citation {
	return Citation{Text: text, Path: path, Kind: kind}
}

func TestExtractSources(t *testing.T) {
	line := func(c Citation, n int) Citation { c.Line = n; return c }
	out := func(c Citation) Citation { c.Outside = true; return c }
	sym := func(text, name, path string) Citation {
		return Citation{Text: text, Path: path, Kind: Symbol, Symbol: name}
	}
	tests := []struct {
		name, in string
		want     []Citation
	}{
		{"backticked file", "- The store is `pkg/store/db.go`.", []Citation{cf("pkg/store/db.go", "pkg/store/db.go", File)}},
		{"backticked dir", "- Everything under `internal/` is private", []Citation{cf("internal/", "internal", Dir)}},
		{"backticked path of unknown nature", "- see `pkg/store`", []Citation{cf("pkg/store", "pkg/store", Path)}},
		{"backticked known name", "- `Makefile` and `go.mod` and `Dockerfile`", []Citation{cf("Makefile", "Makefile", File), cf("go.mod", "go.mod", File), cf("Dockerfile", "Dockerfile", File)}},
		{"backticked dotfiles", "- `.env`, `.github/workflows/ci.yml`, `.env.example`", []Citation{cf(".env", ".env", Path), cf(".github/workflows/ci.yml", ".github/workflows/ci.yml", File), cf(".env.example", ".env.example", Path)}},
		{"bare dotfile names", "- `.DS_Store` `.needs-verification` `.gitconfig` `.prettierrc` `.python-version` `.orphaned_at`", []Citation{cf(".DS_Store", ".DS_Store", Path), cf(".needs-verification", ".needs-verification", Path), cf(".gitconfig", ".gitconfig", Path), cf(".prettierrc", ".prettierrc", Path), cf(".python-version", ".python-version", Path), cf(".orphaned_at", ".orphaned_at", Path)}},
		{"backticked bare file name", "- fixtures in `conftest.py`", []Citation{cf("conftest.py", "conftest.py", File)}},
		{"double backticks", "- ``pkg/x.go`` here", []Citation{cf("pkg/x.go", "pkg/x.go", File)}},
		{"code span with padding", "- `` docs/a.md `` here", []Citation{cf("docs/a.md", "docs/a.md", File)}},
		{"wrapped span that would be a path with spaces", "- `docs/Design\nNotes.md` and `0\n.ml`", nil},
		{"wrapped command span", "- run `python\nscripts/x.py` first", []Citation{cf("scripts/x.py", "scripts/x.py", File)}},
		{"spaces in a path", "- `docs/Design Notes.md` and `Meeting Notes.md`", []Citation{cf("docs/Design Notes.md", "docs/Design Notes.md", File), cf("Meeting Notes.md", "Meeting Notes.md", File)}},
		{"prose file", "- Edit pkg/store/db.go, then docs/guides/x.md.", []Citation{cf("pkg/store/db.go", "pkg/store/db.go", File), cf("docs/guides/x.md", "docs/guides/x.md", File)}},
		{"prose dot slash", "- run ./scripts/run.sh first", []Citation{cf("./scripts/run.sh", "scripts/run.sh", File)}},
		{"prose dir", "- the pkg/store/ directory and tests/", []Citation{cf("pkg/store/", "pkg/store", Dir), cf("tests/", "tests", Dir)}},
		{"prose emphasis and parens", "- **pkg/x.go** (see cmd/app/main.go) “docs/a.md”", []Citation{cf("pkg/x.go", "pkg/x.go", File), cf("cmd/app/main.go", "cmd/app/main.go", File), cf("docs/a.md", "docs/a.md", File)}},
		{"prose after CJK punctuation", "- 详细设计见：docs/设计.md", []Citation{cf("docs/设计.md", "docs/设计.md", File)}},
		{"link", "- [Guide](docs/guide.md) and [t](feedback_x.md)", []Citation{cf("docs/guide.md", "docs/guide.md", File), cf("feedback_x.md", "feedback_x.md", File)}},
		{"link with anchor and title", `- [g](./docs/guide.md#setup "Setup")`, []Citation{cf("./docs/guide.md#setup", "docs/guide.md", File)}},
		{"link angle and escapes", "- [a](<docs/A B.md>) [b](docs/C%20D.md)", []Citation{cf("docs/A B.md", "docs/A B.md", File), cf("docs/C%20D.md", "docs/C D.md", File)}},
		{"image", "- ![arch](docs/arch.png)", []Citation{cf("docs/arch.png", "docs/arch.png", File)}},
		{"link line", "- [x](pkg/a.go#L10-L20)", []Citation{line(cf("pkg/a.go#L10-L20", "pkg/a.go", File), 10)}},
		{"path:line", "- at `src/main.py:42`", []Citation{line(cf("src/main.py:42", "src/main.py", File), 42)}},
		{"path:line:col", "- at src/main.py:42:7.", []Citation{line(cf("src/main.py:42:7", "src/main.py", File), 42)}},
		{"path:range", "- `pkg/a.go:10-20`", []Citation{line(cf("pkg/a.go:10-20", "pkg/a.go", File), 10)}},
		{"path#L", "- `pkg/a.go#L10` `pkg/b.go#L3-L9` `pkg/c.go#L3C2-L9C1`", []Citation{line(cf("pkg/a.go#L10", "pkg/a.go", File), 10), line(cf("pkg/b.go#L3-L9", "pkg/b.go", File), 3), line(cf("pkg/c.go#L3C2-L9C1", "pkg/c.go", File), 3)}},
		{"same path two lines", "- `a/x.go:1` and `a/x.go:2` and `a/x.go:1`", []Citation{line(cf("a/x.go:1", "a/x.go", File), 1), line(cf("a/x.go:2", "a/x.go", File), 2)}},
		{"glob", "- sources: `src/**/*.go`, docs/*.md, plugins/*", []Citation{cf("src/**/*.go", "src/**/*.go", Glob), cf("docs/*.md", "docs/*.md", Glob), cf("plugins/*", "plugins/*", Glob)}},
		{"brace glob", "- `web/{a,b}/*.tsx`", []Citation{cf("web/{a,b}/*.tsx", "web/{a,b}/*.tsx", Glob)}},
		{"route segments are literal", "- `app/[id]/page.tsx` `pages/[...slug].tsx` `app/(auth)/login.tsx` `routes/$postId.tsx`", []Citation{cf("app/[id]/page.tsx", "app/[id]/page.tsx", File), cf("pages/[...slug].tsx", "pages/[...slug].tsx", File), cf("app/(auth)/login.tsx", "app/(auth)/login.tsx", File), cf("routes/$postId.tsx", "routes/$postId.tsx", File)}},
		{"home", "- config in ~/.codex/config.toml and `~/.claude/`", []Citation{out(cf("~/.codex/config.toml", "~/.codex/config.toml", File)), out(cf("~/.claude/", "~/.claude", Dir))}},
		{"absolute system path", "- /etc/hosts and `/Users/me/x.md`", []Citation{out(cf("/etc/hosts", "/etc/hosts", Path)), out(cf("/Users/me/x.md", "/Users/me/x.md", File))}},
		{"windows path", `- C:\Users\me\x.txt`, []Citation{out(cf(`C:\Users\me\x.txt`, "C:/Users/me/x.txt", File))}},
		{"escaping relative", "- `../other/x.go` and `a/../../y.go`", []Citation{out(cf("../other/x.go", "../other/x.go", File)), out(cf("a/../../y.go", "../y.go", File))}},
		{"leading slash project path", "- `/src/main.py` `/api/v1/users` `/compact` `/docs/`", []Citation{cf("/src/main.py", "/src/main.py", File), cf("/docs/", "/docs", Dir)}},
		{"symbol with one file", "- `Open()` in `pkg/store/db.go`", []Citation{sym("Open()", "Open", "pkg/store/db.go"), cf("pkg/store/db.go", "pkg/store/db.go", File)}},
		{"method symbol in prose", "- Store.Close() lives in pkg/store/db.go", []Citation{sym("Store.Close()", "Close", "pkg/store/db.go"), cf("pkg/store/db.go", "pkg/store/db.go", File)}},
		{"a call with arguments is code, not a symbol", "- `calc_ind(df)` in `lib/ind.py`", []Citation{cf("lib/ind.py", "lib/ind.py", File)}},
		{"symbol in prose next to a prose path", "- Impl: `score_breakout()` in swing_scanner/scoring.R", []Citation{sym("score_breakout()", "score_breakout", "swing_scanner/scoring.R"), cf("swing_scanner/scoring.R", "swing_scanner/scoring.R", File)}},
		{"symbol not attached to a memory pointer", "- [display_error_message calls stop()](feedback_stops.md) — code after is unreachable", []Citation{cf("feedback_stops.md", "feedback_stops.md", File)}},
		{"symbol not attached to a document", "- `render()` is described in `docs/ui.md`", []Citation{cf("docs/ui.md", "docs/ui.md", File)}},
		{"symbol attached past a pointer", "- [t](x.md) `Open()` in `pkg/db.go`", []Citation{cf("x.md", "x.md", File), sym("Open()", "Open", "pkg/db.go"), cf("pkg/db.go", "pkg/db.go", File)}},
		{"no symbols in an entry about a change", "- `calc_ind()` in `R/indicators.R` changed from SMA to EMA", []Citation{cf("R/indicators.R", "R/indicators.R", File)}},
		{"no symbols after a rename", "- renamed `Open()` to `OpenDB()` in `pkg/db.go`", []Citation{cf("pkg/db.go", "pkg/db.go", File)}},
		{"script glued to an extension", "- /mnt/c/dev/notes/learning.md에 정리", []Citation{out(cf("/mnt/c/dev/notes/learning.md", "/mnt/c/dev/notes/learning.md", File))}},
		{"symbol without a file", "- `calc_ind()` and `BlingNFSync._sync_one` are hot", nil},
		{"symbol with two files", "- `Open()` in `a/x.go` or `b/y.go`", []Citation{cf("a/x.go", "a/x.go", File), cf("b/y.go", "b/y.go", File)}},
		{"symbol with an outside file", "- `Open()` in `~/x/y.go`", []Citation{out(cf("~/x/y.go", "~/x/y.go", File))}},
		{"pytest node id", "- `tests/test_x.py::TestA::test_b[param]`", []Citation{{Text: "tests/test_x.py::TestA::test_b[param]", Path: "tests/test_x.py", Kind: Symbol, Symbol: "test_b"}}},
		{"command runs a script", "- `scripts/bump.sh <version>`; `python tools/gen.py --out x/`; `uv run python a/b.py`", []Citation{cf("scripts/bump.sh", "scripts/bump.sh", File), cf("tools/gen.py", "tools/gen.py", File), cf("a/b.py", "a/b.py", File)}},
		{"fenced code skipped", "- see:\n  ```bash\n  cat pkg/x.go\n  ```\n  and pkg/y.go", []Citation{cf("pkg/y.go", "pkg/y.go", File)}},
		{"tilde fence skipped", "~~~\nsrc/a.go\n~~~\nsrc/b.go", []Citation{cf("src/b.go", "src/b.go", File)}},
		{"unterminated fence", "- a/b.go\n```\nc/d.go", []Citation{cf("a/b.go", "a/b.go", File)}},
		{"html comment skipped", "- fact <!-- intermem:0123456789abcdef docs/x.md --> pkg/y.go", []Citation{cf("pkg/y.go", "pkg/y.go", File)}},
		{"dedup across forms", "- `pkg/x.go` and pkg/x.go and [x](pkg/x.go) and ./pkg/x.go", []Citation{cf("pkg/x.go", "pkg/x.go", File)}},
		{"unicode names", "- `docs/guía.md`, `ドキュメント/設計.md`", []Citation{cf("docs/guía.md", "docs/guía.md", File), cf("ドキュメント/設計.md", "ドキュメント/設計.md", File)}},
		{"dotted names", "- `third_party/lib.v2/README`, `MyApp.Core/X.cs`, `conf.d/app.conf`, `python3.11/site.py`", []Citation{cf("third_party/lib.v2/README", "third_party/lib.v2/README", File), cf("MyApp.Core/X.cs", "MyApp.Core/X.cs", File), cf("conf.d/app.conf", "conf.d/app.conf", File), cf("python3.11/site.py", "python3.11/site.py", File)}},
		{"mime dir with a file", "- `image/logo.png`", []Citation{cf("image/logo.png", "image/logo.png", File)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Extract(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

// nonCitations lists values that must never be checkable evidence. none: no
// citation at all; otherwise whatever is returned must end up unchecked.
var nonCitations = []struct {
	in   string
	none bool
}{
	// URLs and schemes
	{"https://example.com/a/b.md", true}, {"`https://example.com/docs/x.md`", true},
	{"s3://bucket/key/data.csv", true}, {"file:///etc/x.conf", true}, {"git+ssh://git@host/repo.git", true},
	{"[site](https://example.com/x.md)", true}, {"[mail](mailto:dev@example.com)", true},
	{"<https://example.com/a/b.md>", true}, {"[top](#section)", true},
	{"www.example.com/docs/x.html", true}, {"`www.example.com/a.md`", true},
	// emails
	{"dev@example.com", true}, {"`first.last@corp.io`", true}, {"git@github.com:foo/bar.git", true},
	// MIME types
	{"application/json", true}, {"`application/json`", true}, {"text/plain", true}, {"`text/plain`", true},
	{"`image/*`", true}, {"image/*", true}, {"`multipart/form-data`", true}, {"`application/vnd.api+json`", true},
	// fractions, ratios, dates, versions
	{"1/2", true}, {"`1/2`", true}, {"3/4", true}, {"24/7", true}, {"`16/9`", true},
	{"2026/02/18", true}, {"`2026/02/18`", true}, {"02/18/2026", true}, {"`02/18/2026`", true},
	{"v1.2/3", true}, {"`v1.2/3`", true}, {"`1.2.3/4`", true},
	// module import paths and domains
	{"github.com/foo/bar", true}, {"`github.com/foo/bar`", true}, {"golang.org/x/tools", true},
	{"`gopkg.in/yaml.v3`", true}, {"`go.uber.org/zap`", true}, {"`k8s.io/client-go/kubernetes`", true},
	{"docs.rs/serde/latest", true}, {"`github.com/mistakeknot/<lowercase-name>`", true}, {"`notiontalk.com`", true},
	// CLI flags, env assignments, variables
	{"--foo/bar", true}, {"`--foo/bar.txt`", true}, {"`-o/tmp/x`", true},
	{"FOO=bar/baz", true}, {"`FOO=bar/baz.txt`", true}, {"`PATH=/usr/bin:/bin`", true},
	{"$VAR/x/y.sh", true}, {"`$HOME/.config/x.toml`", true}, {"${VAR}/x.sh", true}, {"`${XDG_CONFIG_HOME}/app/c.yml`", true},
	{"`$(pwd)/x.sh`", true}, {"`out/$GOOS/bin`", true},
	{`%APPDATA%\Code\settings.json`, true}, {"`%USERPROFILE%/x.txt`", true},
	// regexes
	{`^src/.*\.py$`, true}, {"`^src/.*\\.py$`", true}, {`\d+/\d+`, true}, {"`(foo|bar)/baz.go`", true},
	{"`[a-z]+/[0-9]+`", true}, {"`a/b{2,3}`", true},
	// routes and HTTP
	{"GET /v1/messages", true}, {"`GET /v1/messages`", true}, {"POST /api/users.json", true},
	{"/api/v1/users", true}, {"`/compact`", true}, {"/clear", true}, {"`/api/v1/users`", true},
	{"`/api/users.json`", false}, {"`/auth/login`", true},
	// shell pipelines
	{"`cat logs/app.log | grep ERROR`", true}, {"`find . -name '*.go' | xargs gofmt -l`", true},
	{"`ls src/ && make`", true}, {"`git mv a/x.go b/y.go`", true}, {"`cp a/x.txt b/y.txt`", true},
	// words with slashes
	{"and/or", true}, {"read/write", true}, {"client/server", true}, {"TCP/IP", true}, {"I/O", true},
	{"CI/CD", true}, {"w/ flags", true}, {"w/o", true}, {"n/a", true}, {"A/B testing", true},
	{"input/output", true}, {"pass/fail", true},
	{"`read/write`", false}, {"`client/server`", false}, {"`feat/phase2-subscribe`", true}, {"`fix/login-race`", true},
	// placeholders, elisions, truncations, extensions, symbols
	{"`/root/projects/<name>`", true}, {"`src/{module}/x.py`", true}, {"`path/to/file.py`", true},
	{"`plugins/.../x.go`", true}, {"`docs/guides/multi-agent-coordi…`", true}, {"`.md` files", true},
	{"`*.md`", true}, {"`sql.Open`", true}, {"`v1.x`", true}, {"`request_capture.client`", true},
	{"`std::vector`", true}, {"`os.path.join(a, b)`", true}, {"[[wikilink/slug]]", true},
	// properties, lists of extensions or methods, emphasis, approximations
	{"`.textContent`", true}, {"`.length`", true}, {"`.classList`", true}, {"`.forEach/.map/.filter`", true},
	{"`.png/.jpg/.jpeg`", true}, {"~80min/50min", true}, {"`~80min/50min`", true},
	{"涉及**版本/设备相关常量**", true}, {"**bold/text**", true},
}

func TestNonCitations(t *testing.T) {
	root, _ := fixture(t)
	c := NewChecker(root)
	for _, tt := range nonCitations {
		entry := "- note: " + tt.in + " here"
		cs := Extract(entry)
		if tt.none && len(cs) > 0 {
			t.Errorf("%s: extracted %+v, want nothing", tt.in, cs)
			continue
		}
		for _, r := range c.Check(cs) {
			if r.Status != Unchecked {
				t.Errorf("%s: %q is %s (%s), want unchecked", tt.in, r.Text, r.Status, r.Detail)
			}
		}
	}
}

// TestPriorArtDefect5 replays the false "stale" reports of the original tool:
// none of these may be broken.
func TestPriorArtDefect5(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "src/main.py", "print()\n")
	writeFile(t, root, "src/pkg/mod.py", "x = 1\n")
	git(t, root, "init", "-q")
	c := NewChecker(root)
	entry := "- `~/.codex/config.toml`, `src/main.py:42`, `github.com/foo/bar`, `1/2`, `application/json`, `2026/02/18`, `src/**/*.py`"
	cs := Extract(entry)
	if len(cs) != 3 {
		t.Fatalf("got %+v, want the home path, src/main.py and the glob", cs)
	}
	want := map[string]Status{"~/.codex/config.toml": Unchecked, "src/main.py:42": Valid, "src/**/*.py": Valid}
	for _, r := range c.Check(cs) {
		if r.Status != want[r.Text] {
			t.Errorf("%s: %s (%s), want %s", r.Text, r.Status, r.Detail, want[r.Text])
		}
	}
}

func TestExtractCapAndOrder(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("- `pkg/f")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(strings.Repeat("y", i/26))
		b.WriteString(".go`\n")
	}
	cs := Extract(b.String())
	if len(cs) != MaxCitations {
		t.Fatalf("got %d citations, want the cap %d", len(cs), MaxCitations)
	}
	last := -1
	for _, c := range cs {
		i := strings.Index(b.String(), "`"+c.Text+"`")
		if i <= last {
			t.Fatalf("%q out of order", c.Text)
		}
		last = i
	}
}

// TestExtractDoc: a document's links relative to it name files beside it,
// from the project root; links written from the root, back-ticked spans,
// prose paths and URLs are read as Extract reads them; a link that leaves
// the project is reported, not followed.
func TestExtractDoc(t *testing.T) {
	const doc = "docs/solutions/runtime-errors/jq-null.md"
	tests := []struct {
		name, in string
		want     []Citation
		escaped  []string
	}{
		{"dot slash", "- See also: [n](./new-agents-20260210.md) — another",
			[]Citation{cf("docs/solutions/runtime-errors/new-agents-20260210.md", "docs/solutions/runtime-errors/new-agents-20260210.md", File)}, nil},
		{"dot dot", "- See also: [g](../patterns/guard-20260216.md)",
			[]Citation{cf("docs/solutions/patterns/guard-20260216.md", "docs/solutions/patterns/guard-20260216.md", File)}, nil},
		{"bare name", "- [p](plugin-loading-failures.md)",
			[]Citation{cf("docs/solutions/runtime-errors/plugin-loading-failures.md", "docs/solutions/runtime-errors/plugin-loading-failures.md", File)}, nil},
		{"anchor kept", "- [g](../patterns/g.md#the-fix)",
			[]Citation{cf("docs/solutions/patterns/g.md#the-fix", "docs/solutions/patterns/g.md", File)}, nil},
		{"line anchor", "- [x](../../../pkg/a.go#L10-L20)",
			[]Citation{{Text: "pkg/a.go#L10-L20", Path: "pkg/a.go", Kind: File, Line: 10}}, nil},
		{"encoded name", "- [d](./Design%20Notes.md)",
			[]Citation{cf("docs/solutions/runtime-errors/Design Notes.md", "docs/solutions/runtime-errors/Design Notes.md", File)}, nil},
		{"directory", "- [all](../patterns/)",
			[]Citation{cf("docs/solutions/patterns/", "docs/solutions/patterns", Dir)}, nil},
		{"from the root as written", "- [w](docs/solutions/patterns/wal-20260216.md)",
			[]Citation{cf("docs/solutions/patterns/wal-20260216.md", "docs/solutions/patterns/wal-20260216.md", File)}, nil},
		{"spans and prose from the root", "- run `./scripts/x.sh` and ./tools/gen.py",
			[]Citation{cf("./scripts/x.sh", "scripts/x.sh", File), cf("./tools/gen.py", "tools/gen.py", File)}, nil},
		{"escapes the root", "- [s](../../../../etc/passwd) and [t](./../../../../x.md)",
			nil, []string{"../../../../etc/passwd", "./../../../../x.md"}},
		{"encoded escape", "- [s](%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.md)",
			nil, []string{"%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.md"}},
		{"urls and anchors untouched", "- [u](https://example.com/x.md) [a](#setup) [m](mailto:a@b.c)", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, escaped := ExtractDoc(tt.in, doc)
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(escaped, tt.escaped) {
				t.Errorf("ExtractDoc(%q)\n got %+v, escaped %q\nwant %+v, escaped %q", tt.in, got, escaped, tt.want, tt.escaped)
			}
			// What a source stores (Text) extracts to the same citation.
			for _, c := range got {
				if again := Extract("`" + c.Text + "`"); len(again) != 1 || again[0].Path != c.Path {
					t.Errorf("stored %q extracts to %+v, not %s", c.Text, again, c.Path)
				}
			}
		})
	}
	// A document at the root resolves against the root.
	if got, _ := ExtractDoc("[x](./a.md) [y](../b.md)", "README.md"); !reflect.DeepEqual(got, []Citation{cf("a.md", "a.md", File)}) {
		t.Errorf("root document: %+v", got)
	}
}
