package lazy

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	s := NewSet("go", "rust", "go")
	for x, want := range map[string]bool{"go": true, "rust": true, "": false, "Go": false, "c": false} {
		if got := s.Has(x); got != want {
			t.Errorf("Has(%q) = %v, want %v", x, got, want)
		}
	}
	if got := strings.Join(s.Elems(), ","); got != "go,rust,go" {
		t.Errorf("Elems = %q", got)
	}
}

var builds int

func buildSquares() []int {
	builds++
	return []int{0, 1, 4, 9}
}

var squares = New(buildSquares)

func TestValueBuiltOnceOnFirstGet(t *testing.T) {
	if builds != 0 {
		t.Fatalf("built %d times before the first Get", builds)
	}
	for range 3 {
		if got := squares.Get(); len(got) != 4 || got[3] != 9 {
			t.Fatalf("Get = %v", got)
		}
	}
	if builds != 1 {
		t.Fatalf("built %d times, want 1", builds)
	}
}

// allowedInit are the packages of the module that may keep an
// initialisation, each with the reason.
var allowedInit = map[string]string{
	// clienv.needsLook is the hook front's table of bytes escaped in a
	// terminal (the front's packages are kept apart; a [256]bool built by a
	// function at start-up).
	"github.com/intermem/intermem/pkg/clienv": "the hook front's terminal-escape table",
}

// TestNoPackageInitialisation fails when a package of the module that a
// binary links has an initialisation (an init function, or a package-level
// variable the compiler cannot lay out: a map literal, a regexp.MustCompile,
// a strings.NewReplacer, a sync.OnceValue, a table built by a call). Every
// process of every binary runs it before doing anything, and the pages it
// touches cost every hook and every command: the inits of intermem's own
// packages were about forty page faults of each full binary's start. Build
// such a value on first use (this package, lazyre) instead.
func TestNoPackageInitialisation(t *testing.T) {
	// go test caches a result by the files the test itself opened or
	// stat'ed: stat every source file so a change anywhere runs it again.
	for _, dir := range []string{"../../pkg", "../../cmd"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".go") {
				_, err = os.Stat(p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("go", "list", "-export", "-deps",
		"-f", `{{if .Module}}{{if eq .Module.Path "github.com/intermem/intermem"}}{{.ImportPath}} {{.Export}}{{end}}{{end}}`,
		"../../cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{}
	var exports []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, export, ok := strings.Cut(line, " ")
		if !ok || export == "" {
			t.Fatalf("go list gave no export data: %q", line)
		}
		pkgs[pkg] = true
		exports = append(exports, export)
	}
	nm, err := exec.Command("go", append([]string{"tool", "nm", "-size"}, exports...)...).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	// A package's init, or a map literal's part of it; one of a single
	// instruction (a RET) is what the compiler leaves when every
	// package-level value was laid out statically, and the linker drops it.
	initSym := regexp.MustCompile(`\s[0-9a-f]+\s+(\d+) T (\S+?)\.(?:map\.)?init(?:\.\d+)?$`)
	var bad []string
	for _, s := range strings.Split(string(nm), "\n") {
		m := initSym.FindStringSubmatch(s)
		if m == nil || m[1] == "1" || !pkgs[m[2]] {
			continue
		}
		if _, ok := allowedInit[m[2]]; !ok && !slices.Contains(bad, m[2]) {
			bad = append(bad, m[2])
		}
	}
	seen := len(pkgs)
	if seen < 20 {
		t.Fatalf("go list named %d of the module's packages; the binaries link more", seen)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Fatalf("packages with an initialisation, which every intermem process runs at start-up (build what they set up on first use: pkg/lazy, pkg/lazyre):\n  %s", strings.Join(bad, "\n  "))
	}
}
