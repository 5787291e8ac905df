package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/lazyre"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/source/automemory"
	"github.com/intermem/intermem/pkg/source/written"
)

const exportUsage = `Usage: intermem export --out DIR [--format md|json] [--source S]... [--json] [--project DIR]

Writes the project's memories out of intermem, for a git-friendly history
or another tool: by default the private ones, which live in no committed
file (the auto-memory entries and the memories written with intermem
write); --source names others (any source of intermem sources).

--format md (the default) writes one Markdown file per memory,
<slug>-<id>.md, with YAML frontmatter in the shape of compound-engineering
solution documents (title, date, category, tags, and intermem's id,
source and provenance), so a docs/solutions/ reader reads them. --format
json writes one document, memories.json.

Exporting twice with nothing changed gives identical bytes: no export
time is recorded, memories are in a fixed order, and a file whose bytes
are already right is not rewritten. A Markdown file an earlier export
wrote (a name ending in -<16 hex digits>.md) whose memory is gone is
removed; no other file in DIR is touched. Secrets never appear: every
text is redacted; a memory screening flags as a possible prompt
injection is left out and counted.
`

// ExportReport is what export did.
type ExportReport struct {
	Format  string   `json:"format"`
	Out     string   `json:"out"`
	Sources []string `json:"sources"`
	// Memories counts the memories exported; Files lists the files written
	// or already right; Changed the ones whose bytes changed; Removed the
	// files of an earlier export whose memory is gone.
	Memories int      `json:"memories"`
	Files    []string `json:"files"`
	Changed  []string `json:"changed"`
	Removed  []string `json:"removed"`
	// Withheld counts memories left out because screening flagged them.
	Withheld int `json:"withheld"`
}

// ExportedMemory is one memory of the JSON export.
type ExportedMemory struct {
	ID        string            `json:"id"`
	Source    string            `json:"source"`
	Kind      string            `json:"kind"`
	Path      string            `json:"path"`
	Line      int               `json:"line"`
	Title     string            `json:"title"`
	Text      string            `json:"text"`
	Tags      []string          `json:"tags"`
	Citations []string          `json:"citations"`
	Fields    map[string]string `json:"fields"`
	Created   string            `json:"created,omitempty"`
}

// exportName is the name pattern of the Markdown files export writes.
var exportName = lazyre.New(`^[a-z0-9-]*-[0-9a-f]{16}\.md$`)

func runExport(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem export", exportUsage, env.Stdout)
	c.register(fset, true)
	format := fset.String("format", "md", "`md|json`: one Markdown file per memory, or one JSON document")
	out := fset.String("out", "", "the `dir`ectory to write into (created if missing)")
	var srcs multiFlag
	fset.Var(&srcs, "source", "export source `S` (repeatable; default: auto-memory and written)")
	rest, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("unexpected argument %q", rest[0])
	}
	if *format != "md" && *format != "json" {
		return cli.Usagef("--format is md or json, not %q", *format)
	}
	if *out == "" {
		return cli.Usagef("--out DIR is required: the directory to write the memories into")
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	now, err := env.Now()
	if err != nil {
		return err
	}
	dir := *out
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.Dir, dir)
	}
	if len(srcs) == 0 {
		srcs = multiFlag{automemory.Name, written.Name}
	}
	rep := &ExportReport{Format: *format, Out: dir, Sources: dedupSorted(srcs), Files: []string{}, Changed: []string{}, Removed: []string{}}
	var entries []catalog.Entry
	if err := readCatalog(env, p, now, func(cat *catalog.Catalog) error {
		if err := sourceFilter(cat, rep.Sources); err != nil {
			return err
		}
		entries = cat.Entries(rep.Sources...)
		return nil
	}); err != nil {
		return err
	}
	var keep []catalog.Entry
	for _, e := range entries {
		e = redactEntry(e)
		if e.Withheld() || flagged(&e) {
			rep.Withheld++
			continue
		}
		keep = append(keep, e)
	}
	// A fixed order: by id, then source (an id two sources share).
	sort.SliceStable(keep, func(i, j int) bool {
		if keep[i].ID != keep[j].ID {
			return keep[i].ID < keep[j].ID
		}
		return keep[i].Source < keep[j].Source
	})
	rep.Memories = len(keep)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cli.WithHint(fmt.Errorf("export: %w", err), "name a directory you can write with --out")
	}
	files := map[string][]byte{}
	if *format == "json" {
		b, err := exportJSON(keep)
		if err != nil {
			return err
		}
		files["memories.json"] = b
	} else {
		for i := range keep {
			name := exportFile(&keep[i])
			if _, taken := files[name]; taken { // an id two sources share
				name = slug(keep[i].Source, 20) + "-" + name
			}
			files[name] = exportMarkdown(&keep[i])
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		rep.Files = append(rep.Files, n)
		if old, err := readRegular(path); err == nil && bytes.Equal(old, files[n]) {
			continue
		}
		if err := atomicfile.Write(path, files[n], atomicfile.Options{}); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		rep.Changed = append(rep.Changed, n)
	}
	if *format == "md" {
		des, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		for _, d := range des {
			if _, ours := files[d.Name()]; ours || !d.Type().IsRegular() || !exportName.MatchString(d.Name()) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, d.Name())); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			rep.Removed = append(rep.Removed, d.Name())
		}
	}
	if c.json {
		return writeJSON(env.Stdout, rep)
	}
	fmt.Fprintf(env.Stdout, "exported %d %s from %s into %s (%d %s changed", rep.Memories, cli.Plural(rep.Memories, "memory", "memories"),
		strings.Join(rep.Sources, ", "), relTo(env.Dir, dir), len(rep.Changed), cli.Plural(len(rep.Changed), "file", "files"))
	if len(rep.Removed) > 0 {
		fmt.Fprintf(env.Stdout, ", %d removed", len(rep.Removed))
	}
	fmt.Fprintln(env.Stdout, ")")
	if rep.Withheld > 0 {
		fmt.Fprintf(env.Stdout, "left out %d %s that screening flags as a possible prompt injection\n", rep.Withheld, cli.Plural(rep.Withheld, "memory", "memories"))
	}
	return nil
}

// readRegular reads path if it is a regular file (not through a link).
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	return os.ReadFile(path)
}

// redactEntry redacts every text of e again: the catalog stores them
// redacted, but an export leaves intermem, so it does not rely on that.
func redactEntry(e catalog.Entry) catalog.Entry {
	e.Title, e.Text = redact.String(e.Title), redact.String(e.Text)
	e.Tags = slices.Clone(e.Tags)
	for i := range e.Tags {
		e.Tags[i] = redact.String(e.Tags[i])
	}
	e.Citations = slices.Clone(e.Citations)
	for i := range e.Citations {
		e.Citations[i] = redact.String(e.Citations[i])
	}
	fields := map[string]string{}
	for k, v := range e.Fields {
		fields[redact.String(k)] = redact.String(v)
	}
	e.Fields = fields
	return e
}

// flagged screens what an export writes of e.
func flagged(e *catalog.Entry) bool {
	for _, s := range append([]string{e.Title, e.Text}, e.Tags...) {
		if len(screen.Check(s)) > 0 {
			return true
		}
	}
	return false
}

// exportFile is the Markdown file name of e: a slug of its redacted title
// (letters and digits of redact.Name's result) and its id.
func exportFile(e *catalog.Entry) string {
	s := slug(redact.Name(e.Title), 48)
	if s == "" {
		s = "memory"
	}
	return s + "-" + e.ID + ".md"
}

// slug keeps lower-case ASCII letters and digits, one "-" for each run of
// anything else, at most n bytes.
func slug(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= n {
				break
			}
			continue
		}
		dash = true
	}
	return strings.Trim(b.String(), "-")
}

// yamlString is s as a YAML double-quoted scalar: JSON's string syntax,
// which YAML's double-quoted style accepts, with every character a
// terminal or a reader could misread escaped.
func yamlString(s string) string {
	b, _ := json.Marshal(cli.Escape(s))
	return string(b)
}

func yamlList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = yamlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// exportMarkdown renders e as a solution document: frontmatter in
// compound's shape (title, date, category, tags; intermem's id, source,
// kind and provenance as further keys), then "# Title" and the text.
func exportMarkdown(e *catalog.Entry) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", yamlString(oneLine(e.Title)))
	if !e.Created.IsZero() { // not FirstSeen: a read-only catalog's is now
		fmt.Fprintf(&b, "date: %s\n", e.Created.UTC().Format(time.DateOnly))
	}
	category := string(e.Kind)
	if t := e.Fields["type"]; t != "" {
		category = t
	}
	fmt.Fprintf(&b, "category: %s\n", yamlString(category))
	fmt.Fprintf(&b, "tags: %s\n", yamlList(nonNil(e.Tags)))
	fmt.Fprintf(&b, "intermem_id: %s\n", yamlString(e.ID))
	fmt.Fprintf(&b, "intermem_source: %s\n", yamlString(e.Source))
	fmt.Fprintf(&b, "origin: %s\n", yamlString(originOf(e)))
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		if k != "type" && k != "files" && yamlKey.MatchString(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := k
		if name == "source" {
			name = "written_by"
		}
		fmt.Fprintf(&b, "%s: %s\n", name, yamlString(oneLine(e.Fields[k])))
	}
	if len(e.Citations) > 0 {
		fmt.Fprintf(&b, "files: %s\n", yamlList(e.Citations))
	}
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %s\n\n", cli.Escape(oneLine(e.Title)))
	text := strings.TrimSpace(cli.Escape(e.Text))
	b.WriteString(text)
	b.WriteString("\n")
	return b.Bytes()
}

// yamlKey is a field name written as a frontmatter key as it is.
var yamlKey = lazyre.New(`^[a-z][a-z0-9_]{0,40}$`)

func originOf(e *catalog.Entry) string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	return e.Path
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func exportJSON(es []catalog.Entry) ([]byte, error) {
	ms := make([]ExportedMemory, 0, len(es))
	for i := range es {
		e := &es[i]
		m := ExportedMemory{ID: e.ID, Source: e.Source, Kind: string(e.Kind), Path: e.Path, Line: e.Line, Title: e.Title, Text: e.Text,
			Tags: nonNil(e.Tags), Citations: nonNil(e.Citations), Fields: e.Fields}
		if m.Fields == nil {
			m.Fields = map[string]string{}
		}
		if !e.Created.IsZero() {
			m.Created = e.Created.UTC().Format(time.RFC3339)
		}
		ms = append(ms, m)
	}
	var b bytes.Buffer
	if err := cli.WriteJSON(&b, map[string]any{"memories": ms}); err != nil {
		return nil, errors.Join(errors.New("export: encode"), err)
	}
	return b.Bytes(), nil
}
