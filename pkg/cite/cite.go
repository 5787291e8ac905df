package cite

// Kind says what a citation claims to name.
type Kind string

// The kinds of citation Extract returns.
const (
	// File is a path whose last segment is a known file name or has a known
	// file extension (pkg/store/db.go, Makefile, go.mod).
	File Kind = "file"
	// Dir is a path written with a trailing slash (pkg/store/).
	Dir Kind = "dir"
	// Glob is a doublestar pattern with a directory part (src/**/*.go).
	Glob Kind = "glob"
	// Symbol is an identifier claimed to be defined in one file.
	Symbol Kind = "symbol"
	// Path is a path-like reference whose file or directory nature is
	// unknown until it is checked (pkg/store, .github).
	Path Kind = "path"
)

// MaxCitations is the most citations Extract returns for one entry.
const MaxCitations = 64

// Citation is one reference to the project found in an entry's text.
type Citation struct {
	// Text is the reference exactly as written in the entry, without the
	// surrounding backticks or markdown link syntax.
	Text string
	// Path is the cleaned, slash-separated path: relative to the project root,
	// absolute, or starting with "~/". Line suffixes and anchors are removed and
	// a directory's trailing slash is dropped. For Kind Glob it is the pattern.
	Path string
	// Kind is what the reference claims to name.
	Kind Kind
	// Line is the first line number from path:42, path:42:7, path#L10 or
	// path#L10-L20, or 0.
	Line int
	// Symbol is the identifier checked for Kind Symbol ("Open" for
	// "`Store.Open()`"); Path is then the file it is claimed to be in.
	Symbol string
	// Outside is set for paths that cannot belong to the project: absolute paths
	// under a system directory, drive-letter paths, ~/ paths, and relative paths
	// that escape the root with "..". They are never checked.
	Outside bool
}

// Checkable returns how many citations are not Outside.
func Checkable(cs []Citation) int {
	n := 0
	for _, c := range cs {
		if !c.Outside {
			n++
		}
	}
	return n
}
