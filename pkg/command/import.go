package command

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/intermem/intermem/pkg/lazyre"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/automem"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/store"
)

const importUsage = `Usage: intermem import [--json] [--project DIR]

Brings in what the original Python intermem left in a project, so its
users lose nothing:

  - facts it promoted, lines of CLAUDE.md, AGENTS.md or docs/intermem/*.md
    carrying its 8-hex markers (<!-- intermem:1a2b3c4d -->): each becomes a
    promoted fact in intermem's store (origin "intermem (Python)"), so it
    is validated, decayed and archived like the facts intermem promotes,
    and never offered for promotion again. Documents are not edited.
  - its snapshot history, .intermem/stability.jsonl: one JSON object a
    line, each a snapshot (a time and the 16-hex hashes of the memory
    entries it saw). An auto-memory entry still in memory whose hash (the
    SHA-256 of its stripped text) is in snapshots gets that history: first
    seen at its earliest snapshot, and one session per calendar day with a
    snapshot. Snapshots were command runs, not sessions, so several on one
    day count once, and a history never lowers what intermem counted.

Running it again changes nothing more. It says what it imported.
`

// ImportReport is what import found and did.
type ImportReport struct {
	// Markers counts the 8-hex marked facts found; Imported those now
	// recorded; Known those intermem already had a record of.
	Markers  int      `json:"markers"`
	Imported []string `json:"imported"`
	Known    int      `json:"known"`
	// Snapshots and Hashes describe stability.jsonl (0 when absent);
	// BadLines counts lines that were not snapshots.
	Snapshots int `json:"snapshots"`
	Hashes    int `json:"hashes"`
	BadLines  int `json:"bad_lines"`
	// Seeded lists the auto-memory entries whose history was raised.
	Seeded []ImportSeed `json:"seeded"`
}

// ImportSeed is one auto-memory entry given its Python history.
type ImportSeed struct {
	ID        string    `json:"id"`
	Sessions  int       `json:"sessions"`
	FirstSeen time.Time `json:"first_seen"`
}

// PythonOrigin is the origin recorded for a fact the Python intermem
// promoted.
const PythonOrigin = "intermem (Python)"

// maxStability bounds the stability.jsonl read.
const maxStability = 64 << 20

var (
	hex8  = lazyre.New(`^[0-9a-f]{8}$`)
	hex16 = lazyre.New(`^[0-9a-f]{16}$`)
)

func runImport(ctx context.Context, env *cli.Env, args []string) error {
	var c common
	fset := cli.FlagSet("intermem import", importUsage, env.Stdout)
	c.register(fset, true)
	rest, err := cli.Parse(fset, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("unexpected argument %q", rest[0])
	}
	p, err := c.resolve(env)
	if err != nil {
		return err
	}
	w, err := openWriter(env, p, "intermem import")
	if err != nil {
		return err
	}
	defer w.Close()
	rep := &ImportReport{Imported: []string{}, Seeded: []ImportSeed{}}
	ts, err := loadTargets(p)
	if err != nil {
		return err
	}
	snaps, err := readStability(filepath.Join(p.StateDir, "stability.jsonl"), rep)
	if err != nil {
		return err
	}
	mem, err := scanMemory(p)
	if err != nil {
		return err
	}
	err = w.update(func(tx *bolt.Tx) error {
		for _, d := range ts.Docs() {
			for _, m := range d.Doc.Marked() {
				if m.Heading || !hex8.MatchString(m.ID) {
					continue
				}
				rep.Markers++
				known, err := store.HasPromoted(tx, m.ID)
				if err != nil {
					return err
				}
				if known {
					rep.Known++
					continue
				}
				rec := store.Promoted{ID: m.ID, Target: d.Name, Section: m.Section, At: w.now, Op: "import",
					Text: redact.String(m.Text), Origin: PythonOrigin, Kind: "fact", Confidence: 0.5, LastEvidence: w.now}
				if err := store.PutPromoted(tx, &rec); err != nil {
					return err
				}
				rep.Imported = append(rep.Imported, m.ID)
			}
		}
		if len(snaps) == 0 || mem == nil {
			return nil
		}
		for _, e := range mem.Entries() {
			if e.Kind == automem.Pointer {
				continue
			}
			// The Python intermem hashed the bullet with its marker.
			days, first := snapshotHistory(snaps, pythonHash(e.Text))
			if e.Marker != "" {
				if d, f := snapshotHistory(snaps, pythonHash(e.Marker+" "+e.Text)); d > days {
					days, first = d, f
				}
			}
			if days == 0 {
				continue
			}
			rec, ok, err := store.GetSeen(tx, e.ID)
			if err != nil {
				return err
			}
			if ok && rec.Sessions >= days && !rec.FirstSeen.After(first) {
				continue
			}
			if !ok {
				rec = store.Entry{ID: e.ID, Kind: string(e.Kind), File: e.File, Section: e.Section, Preview: preview(e.Text), LastSeen: first}
			}
			rec.Sessions = max(rec.Sessions, days)
			if rec.FirstSeen.IsZero() || first.Before(rec.FirstSeen) {
				rec.FirstSeen = first
			}
			if err := store.PutSeen(tx, &rec); err != nil {
				return err
			}
			rep.Seeded = append(rep.Seeded, ImportSeed{ID: e.ID, Sessions: rec.Sessions, FirstSeen: rec.FirstSeen})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(env.Stdout, rep)
	}
	fmt.Fprintf(env.Stdout, "promoted facts of the Python intermem: %d found, %d imported, %d already known\n", rep.Markers, len(rep.Imported), rep.Known)
	if rep.Snapshots == 0 {
		fmt.Fprintln(env.Stdout, "no .intermem/stability.jsonl: no history to import")
	} else {
		fmt.Fprintf(env.Stdout, "stability.jsonl: %d %s of %d entry hashes; %d memory %s given %s history\n", rep.Snapshots,
			cli.Plural(rep.Snapshots, "snapshot", "snapshots"), rep.Hashes, len(rep.Seeded), cli.Plural(len(rep.Seeded), "entry", "entries"), "its")
	}
	if rep.BadLines > 0 {
		fmt.Fprintf(env.Stdout, "%d %s of stability.jsonl %s not a snapshot; ignored\n", rep.BadLines, cli.Plural(rep.BadLines, "line", "lines"), cli.Plural(rep.BadLines, "is", "are"))
	}
	return nil
}

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.ToValidUTF8(s, "")
}

// pySnapshot is one line of stability.jsonl: when, and the hashes it saw.
type pySnapshot struct {
	at     time.Time
	hashes map[string]bool
}

// pythonHash is the Python intermem's entry hash: the first 16 hex of the
// SHA-256 of the entry's stripped text.
func pythonHash(text string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return hex.EncodeToString(sum[:8])
}

// snapshotHistory returns on how many calendar days a snapshot held hash,
// and the earliest such snapshot.
func snapshotHistory(snaps []pySnapshot, hash string) (days int, first time.Time) {
	seen := map[string]bool{}
	for _, s := range snaps {
		if !s.hashes[hash] {
			continue
		}
		if d := s.at.UTC().Format(time.DateOnly); !seen[d] {
			seen[d] = true
			days++
		}
		if first.IsZero() || s.at.Before(first) {
			first = s.at
		}
	}
	return days, first
}

// readStability reads the Python intermem's snapshot history leniently:
// every line a JSON object; its time the first of timestamp, ts, time,
// created_at or date (RFC 3339, a date, or Unix seconds); its hashes every
// 16-hex string in it, as a value or a key. A line without both is not a
// snapshot. The file is data: a regular file, not followed through a
// link, bounded.
func readStability(path string, rep *ImportReport) ([]pySnapshot, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, cli.WithHint(fmt.Errorf("stability history: %w", err), "make .intermem/stability.jsonl a regular file, or move it aside")
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, cli.WithHint(fmt.Errorf("stability history %s is not a regular file", path), "move it aside")
	}
	var snaps []pySnapshot
	all := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(fh, maxStability))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v map[string]any
		if json.Unmarshal(line, &v) != nil {
			rep.BadLines++
			continue
		}
		s := pySnapshot{hashes: map[string]bool{}}
		for _, k := range []string{"timestamp", "ts", "time", "created_at", "date"} {
			if t, ok := parseWhen(v[k]); ok {
				s.at = t
				break
			}
		}
		collectHashes(v, s.hashes, 0)
		if s.at.IsZero() || len(s.hashes) == 0 {
			rep.BadLines++
			continue
		}
		for h := range s.hashes {
			all[h] = true
		}
		snaps = append(snaps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("stability history: %w", err)
	}
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].at.Before(snaps[j].at) })
	rep.Snapshots, rep.Hashes = len(snaps), len(all)
	return snaps, nil
}

func parseWhen(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05", time.DateOnly} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC(), true
			}
		}
	case float64:
		if x > 0 && x < 1e11 {
			return time.Unix(int64(x), 0).UTC(), true
		}
	}
	return time.Time{}, false
}

// collectHashes adds every 16-hex string of v (values and keys) to out,
// at most 16 levels deep.
func collectHashes(v any, out map[string]bool, depth int) {
	if depth > 16 {
		return
	}
	switch x := v.(type) {
	case string:
		if hex16.MatchString(x) {
			out[x] = true
		}
	case []any:
		for _, e := range x {
			collectHashes(e, out, depth+1)
		}
	case map[string]any:
		for k, e := range x {
			if hex16.MatchString(k) {
				out[k] = true
			}
			collectHashes(e, out, depth+1)
		}
	}
}
