package cite

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"time"
)

// gitTimeout bounds the one git log a Checker may run.
const gitTimeout = 10 * time.Second

// history is what git recorded about paths that left the tree: renames
// (old → new, the latest rename of each old name) and deletions. Paths are
// relative to the Checker's root.
type history struct {
	next   map[string]string   // old name → the name it was last renamed to
	gone   map[string]bool     // deleted, or renamed away, at some point
	byBase map[string][]string // base name → gone paths, most recent first
	tops   map[string]bool     // first segments of gone paths
}

// loadHistory runs git log once. Any failure (no git, not a repository, a
// timeout) yields an empty history: citations are then judged on disk alone.
func loadHistory(root string) *history {
	h := &history{next: map[string]string{}, gone: map[string]bool{}, byBase: map[string][]string{}, tops: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "-c", "core.quotePath=false",
		"log", "--relative", "--diff-filter=RD", "-M", "--name-status", "--format=", "-z")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return h
	}
	h.parse(out)
	return h
}

type change struct {
	status   byte
	from, to string
}

// parse reads `git log --name-status -z` output (newest commit first) and
// replays it oldest first, so a name's latest fate wins.
func (h *history) parse(out []byte) {
	var toks []string
	for _, t := range bytes.Split(out, []byte{0}) {
		if s := strings.TrimSpace(string(t)); s != "" {
			toks = append(toks, s)
		}
	}
	var changes []change
	for i := 0; i < len(toks); {
		st := toks[i]
		switch {
		case (st[0] == 'R' || st[0] == 'C') && i+2 < len(toks):
			changes = append(changes, change{st[0], toks[i+1], toks[i+2]})
			i += 3
		case st == "D" && i+1 < len(toks):
			changes = append(changes, change{'D', toks[i+1], ""})
			i += 2
		default:
			i++ // unknown status: resynchronise on the next token
		}
	}
	for i := len(changes) - 1; i >= 0; i-- {
		ch := changes[i]
		switch ch.status {
		case 'R':
			h.next[ch.from] = ch.to
			h.markGone(ch.from)
			delete(h.gone, ch.to)
		case 'D':
			delete(h.next, ch.from)
			h.markGone(ch.from)
		}
	}
	for b, ps := range h.byBase {
		// most recent first, each path once
		seen := map[string]bool{}
		var out []string
		for j := len(ps) - 1; j >= 0; j-- {
			if !seen[ps[j]] {
				seen[ps[j]] = true
				out = append(out, ps[j])
			}
		}
		h.byBase[b] = out
	}
}

func (h *history) markGone(p string) {
	h.gone[p] = true
	if own(p) {
		// intermem's own files (a flattened detail document) say nothing
		// about the project's layout or about a bare name cited elsewhere.
		return
	}
	h.byBase[path.Base(p)] = append(h.byBase[path.Base(p)], p)
	first, _, _ := strings.Cut(p, "/")
	h.tops[first] = true
}

// follow returns the latest name in p's rename chain, if p was renamed.
func (h *history) follow(p string) (string, bool) {
	seen := map[string]bool{p: true}
	cur := p
	for {
		n, ok := h.next[cur]
		if !ok || seen[n] {
			break
		}
		seen[n] = true
		cur = n
	}
	return cur, cur != p
}

// dirMove infers where directory d went from the renames of its files: the
// new directory most of them agree on (intermem's own files vote only for
// one of its own directories).
func (h *history) dirMove(d string) (string, bool) {
	votes := map[string]int{}
	prefix := d + "/"
	for old := range h.next {
		if !strings.HasPrefix(old, prefix) || own(old) && !own(d) {
			continue
		}
		final, _ := h.follow(old)
		rest := old[len(prefix):]
		if strings.HasSuffix(final, "/"+rest) {
			votes[strings.TrimSuffix(final, "/"+rest)]++
		}
	}
	best, n := "", 0
	keys := make([]string, 0, len(votes))
	for k := range votes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if votes[k] > n {
			best, n = k, votes[k]
		}
	}
	return best, n > 0
}

// goneUnder reports whether git removed anything at or under d (intermem's
// own files count only under one of its own directories).
func (h *history) goneUnder(d string) bool {
	if h.gone[d] {
		return true
	}
	prefix := d + "/"
	for p := range h.gone {
		if strings.HasPrefix(p, prefix) && (!own(p) || own(d)) {
			return true
		}
	}
	return false
}
