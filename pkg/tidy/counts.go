package tidy

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/lazyre"
)

// Count is a number in memory text whose noun names a directory of the
// project, with what that directory holds now.
type Count struct {
	File string `json:"file"` // memory file, relative to the memory directory
	Line int    `json:"line"`
	Text string `json:"text"` // "48 plugins", as written
	Said int    `json:"said"`
	// Dir is the directory the noun names, relative to the project root
	// and slash-separated; Dirs and Files count what it holds (not hidden;
	// README files are not counted).
	Dir   string `json:"dir"`
	Dirs  int    `json:"dirs"`
	Files int    `json:"files"`
	// Stale is true when Said is none of Dirs, Files and Dirs+Files.
	Stale bool `json:"stale"`
}

// countRE finds a number (not part of a version, a date, a path, an id or
// a larger number) followed by one or two words.
var countRE = lazyre.New(`(?:^|[^\w.,\-/#:$@+])(\d{1,6})[ \t]+([A-Za-z][A-Za-z-]*)(?:[ \t]+([A-Za-z][A-Za-z-]*))?`)

// Limits of the walk that finds the project's directories.
const (
	countDepth   = 2    // the root's children and grandchildren
	countMaxDirs = 4096 // directories read at most
)

// Counts checks the counts written in memory against the project at root.
// It is narrow on purpose, so that what it calls stale is stale:
//
//   - a count is a number followed by a word (outside code spans, fences
//     and frontmatter); the word, or the word after a capitalised one
//     ("48 Interverse plugins"), is its noun;
//   - the noun, or its singular or plural, must name exactly one directory
//     of the project within two levels of the root (hidden directories,
//     node_modules and vendor are not looked in; a link is not followed);
//   - the count is stale only when it equals none of the directory's
//     sub-directories, its files, or both together.
//
// It returns every count it could check, stale or not, in file and line
// order.
func Counts(d *automem.Dir, root string) []Count {
	if d == nil {
		return nil
	}
	dirs := projectDirs(root)
	var out []Count
	held := map[string][2]int{}
	for _, f := range d.Files {
		body := f.Content
		first := 0
		if fm := f.Frontmatter; fm != nil {
			first = fm.End
		}
		var fence automem.Fence
		off, lineNo := 0, 0
		for _, l := range strings.SplitAfter(string(body), "\n") {
			start := off
			off += len(l)
			lineNo++
			if start < first {
				continue
			}
			s := strings.TrimRight(l, "\r\n")
			t := strings.TrimLeft(s, " \t")
			if fence.Code(t) {
				continue
			}
			s = withoutCode(s)
			for _, m := range countRE.Get().FindAllStringSubmatchIndex(s, -1) {
				c, ok := check(s, m, dirs)
				if !ok {
					continue
				}
				h, seen := held[c.Dir]
				if !seen {
					h[0], h[1] = holds(filepath.Join(root, filepath.FromSlash(c.Dir)))
					held[c.Dir] = h
				}
				c.File, c.Line, c.Dirs, c.Files = f.Name, lineNo, h[0], h[1]
				c.Stale = c.Said != c.Dirs && c.Said != c.Files && c.Said != c.Dirs+c.Files
				out = append(out, c)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].File != out[b].File {
			return out[a].File < out[b].File
		}
		return out[a].Line < out[b].Line
	})
	return out
}

// check reads one match: the number and the noun that names a directory.
func check(s string, m []int, dirs map[string][]string) (Count, bool) {
	num, _ := strconv.Atoi(s[m[2]:m[3]])
	w1 := s[m[4]:m[5]]
	if ds := named(w1, dirs); len(ds) == 1 {
		return Count{Text: s[m[2]:m[5]], Said: num, Dir: ds[0]}, true
	}
	if m[6] >= 0 && unicode.IsUpper(rune(w1[0])) {
		if ds := named(s[m[6]:m[7]], dirs); len(ds) == 1 {
			return Count{Text: s[m[2]:m[7]], Said: num, Dir: ds[0]}, true
		}
	}
	return Count{}, false
}

// named returns the directories a noun names: its own name, its singular
// or its plural, in any case.
func named(noun string, dirs map[string][]string) []string {
	w := strings.ToLower(noun)
	forms := []string{w}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		forms = append(forms, w[:len(w)-3]+"y")
	case strings.HasSuffix(w, "s") && len(w) > 3:
		forms = append(forms, w[:len(w)-1])
	case strings.HasSuffix(w, "y"):
		forms = append(forms, w+"s", w[:len(w)-1]+"ies")
	default:
		forms = append(forms, w+"s", w+"es")
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range forms {
		for _, d := range dirs[f] {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// withoutCode blanks inline code spans (`…`), whose numbers are code.
func withoutCode(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	b := []byte(s)
	in := false
	for i, c := range b {
		if c == '`' {
			in = !in
			continue
		}
		if in {
			b[i] = ' '
		}
	}
	return string(b)
}

// projectDirs maps the lower-cased name of every directory within
// countDepth levels of root to its paths (relative, slash-separated).
func projectDirs(root string) map[string][]string {
	out := map[string][]string{}
	queue := []string{"."}
	read := 0
	for depth := 1; depth <= countDepth && len(queue) > 0; depth++ {
		var next []string
		for _, rel := range queue {
			if read >= countMaxDirs {
				return out
			}
			read++
			ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				continue
			}
			for _, e := range ents {
				name := e.Name()
				if !e.IsDir() || strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" {
					continue
				}
				p := path.Join(rel, name)
				out[strings.ToLower(name)] = append(out[strings.ToLower(name)], p)
				next = append(next, p)
			}
		}
		queue = next
	}
	return out
}

// holds counts a directory's sub-directories and files (not hidden, no
// README).
func holds(dir string) (dirs, files int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		name := e.Name()
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		switch {
		case strings.HasPrefix(name, "."):
		case isDir:
			dirs++
		case strings.HasPrefix(strings.ToUpper(name), "README"):
		default:
			files++
		}
	}
	return dirs, files
}
