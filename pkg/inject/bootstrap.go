package inject

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/continuity"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/rendercache"
	sourcecont "github.com/intermem/intermem/pkg/source/continuity"
	"github.com/intermem/intermem/pkg/store"
)

// Boot is where the work stands, rendered ahead of everything else (the
// bootstrap of a session): the project's identity, the current phase, the
// resume note of the latest checkpoint and the latest decisions. Gather
// reads it in its one store transaction; continuity.Boot renders it.
type Boot struct {
	// Identity is one line saying what the project is: "project" of
	// .intermem/config.json, else the first paragraph of README.md (as
	// read, not yet redacted, screened or escaped: Render does that).
	Identity string
	// Phase is the current phase (nil: none started, or not valid).
	Phase *store.Phase
	// Checkpoint is the one the resume note is made of (nil: none, or a
	// resumed or compacted session, which continues its own history).
	Checkpoint *store.Checkpoint
	// Decisions are the project's decisions, oldest first.
	Decisions []store.PhaseDecision
	// Sessions says which sessions' starts get this same Boot (see
	// SessionRule).
	Sessions SessionRule
	// stored is set when the store holds long-term continuity records
	// (continuity.Empty is false): otherwise they are read from the
	// export (exportBoot).
	stored bool
}

// SessionRule is how the resume note depends on the session starting
// (rendercache.SessionRule).
type SessionRule = rendercache.SessionRule

// maxBootTokens caps the bootstrap; it takes at most a quarter of the
// budget as well.
const maxBootTokens = 300

// bootBytes is the most the bootstrap may take of a budget.
func bootBytes(budget int) int {
	return min(budget/4, maxBootTokens) * BytesPerToken
}

// readBoot reads the continuity records for the start of session on
// branch.
func readBoot(tx *bolt.Tx, branch, session string) (*Boot, error) {
	b := &Boot{stored: !continuity.Empty(tx)}
	hd, err := store.GetHead(tx)
	if err != nil {
		return nil, err
	}
	if hd.Phase != nil {
		if p, had, err := store.GetPhase(tx, *hd.Phase); err == nil && had && p.Status == store.StatusValid {
			b.Phase = &p
		}
	}
	if b.Decisions, err = continuity.Decisions(tx, continuity.Filter{}); err != nil {
		return nil, err
	}
	c, ok, err := continuity.Latest(tx, branch, session)
	if err != nil {
		return nil, err
	}
	if ok {
		b.Checkpoint = &c
		b.Sessions.Chosen = c.Session
	}
	// Were any passed over because they are this session's? Then only
	// this session gets this note.
	if session != "" {
		all, had, err := continuity.Latest(tx, branch, "")
		if err != nil {
			return nil, err
		}
		if had && (!ok || all.ID != c.ID) {
			b.Sessions.Skipped = session
		}
	}
	return b, nil
}

// exportBoot is the Boot of a start whose store holds no long-term
// continuity record (lost, or made anew by a Stop hook; or no store at
// all) while .intermem/continuity.jsonl holds them: read from the file as
// the rebuild reads it (continuity.ReadRebuilt: no link, bounded, ids
// recomputed, text redacted, a flagged line left out), in a scratch store
// outside the project. A session start opens the project's store
// read-only and writes nothing in it; the first continuity write or Stop
// checkpoint rebuilds the store. The store's own latest checkpoint (a
// hook's, recorded since the loss) is kept when it is newer than the
// file's. A file that cannot be read or rebuilt leaves b as it is: the
// start goes on without it.
func exportBoot(deps *Deps, root, branch, session string, b *Boot) *Boot {
	stateDir := filepath.Join(root, project.StateDirName)
	// The rendering depends on the file: the render cache must see it
	// change.
	deps.Lstat(filepath.Join(stateDir, sourcecont.FileName))
	data, err := continuity.ReadExport(stateDir)
	if err != nil {
		return b
	}
	var rb *Boot
	if _, err := continuity.ReadRebuilt(data, func(tx *bolt.Tx) error {
		var err error
		rb, err = readBoot(tx, branch, session)
		return err
	}); err != nil {
		return b
	}
	rb.Identity, rb.stored = b.Identity, false
	if c := b.Checkpoint; c != nil && (rb.Checkpoint == nil || c.Time.After(rb.Checkpoint.Time)) {
		rb.Checkpoint, rb.Sessions = c, b.Sessions
	}
	return rb
}

// identityBytes is how much of README.md is read for its first paragraph.
const identityBytes = 8 << 10

// readIdentity is the project's identity line: "project" of
// .intermem/config.json (configured), else the first paragraph of
// README.md or README at the root. CLAUDE.md is not used: Claude Code has
// loaded it already. A README that is not a regular file (a link, which
// a cloned repository could point at any file of the user's) is not read.
func readIdentity(deps *Deps, root, configured string) string {
	if s := oneLine(configured); s != "" {
		return s
	}
	for _, name := range []string{"README.md", "README"} {
		path := filepath.Join(root, name)
		fi, err := deps.Lstat(path)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() {
			return ""
		}
		b, err := readPrefix(path, identityBytes)
		if err != nil {
			return ""
		}
		return firstParagraph(string(b))
	}
	return ""
}

// readPrefix reads at most n bytes of the regular file at path, never
// through a link.
func readPrefix(path string, n int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, n))
}

// firstParagraph is the first paragraph of prose of a markdown text: past
// a frontmatter block, headings, HTML, images and badges, the lines up to
// the next blank one, as one line.
func firstParagraph(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	i := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i = 1; i < len(lines) && strings.TrimSpace(lines[i]) != "---"; i++ {
		}
		i++
	}
	var para []string
	fence := false
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			fence = !fence
			if len(para) > 0 {
				break
			}
			continue
		}
		if fence {
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "<") || strings.HasPrefix(l, "![") ||
			strings.HasPrefix(l, "[![") || strings.HasPrefix(l, "|") || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "===") {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, l)
	}
	return oneLine(strings.Join(para, " "))
}

// oneLine is s on one line, its runs of space made one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
