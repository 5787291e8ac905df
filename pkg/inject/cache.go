package inject

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/screen"
	"github.com/intermem/intermem/pkg/statefile"
)

// CacheName is the file under .intermem/ holding the last rendering.
const CacheName = "context.cache"

const cacheMagic = "intermem context cache v1\n"

// ReadCache returns the cached rendering and when it was made. The file is
// read as hostile (statefile: no link followed, a FIFO not waited on, at
// most 64 KiB).
func ReadCache(path string) (text string, at time.Time, ok bool) {
	b, err := statefile.Read(path, 64<<10)
	if err != nil {
		return "", time.Time{}, false
	}
	rest, found := bytes.CutPrefix(b, []byte(cacheMagic))
	if !found {
		return "", time.Time{}, false
	}
	line, body, found := bytes.Cut(rest, []byte("\n"))
	if !found {
		return "", time.Time{}, false
	}
	stamp, found := bytes.CutPrefix(line, []byte("at "))
	if !found {
		return "", time.Time{}, false
	}
	at, err = time.Parse(time.RFC3339, string(stamp))
	if err != nil {
		return "", time.Time{}, false
	}
	return string(body), at, true
}

// WriteCache stores text as the last rendering, made at now, unless the
// cache already holds exactly this text. The file is replaced atomically
// (atomicfile, in the state directory that holds it); it is not fsynced,
// because a cache lost in a crash costs nothing.
func WriteCache(path, text string, now time.Time) error {
	old, _, ok := ReadCache(path)
	if ok && old == text {
		return nil
	}
	if !ok && text == "" {
		if _, err := os.Stat(path); err != nil {
			return nil
		}
	}
	data := cacheMagic + "at " + now.UTC().Format(time.RFC3339) + "\n" + text
	if err := atomicfile.WriteState(filepath.Dir(path), path, []byte(data), atomicfile.Options{NoSync: true}); err != nil {
		return fmt.Errorf("write context cache: %w", err)
	}
	return nil
}

// Cached renders a cached text for serving when the store cannot be read:
// a first line saying it is cached and from when, then as many whole lines
// of the cached text as fit the budget. It returns "" when the cache is
// missing, empty or nothing of it fits.
func Cached(path string, budget int, why string) string {
	text, at, ok := ReadCache(path)
	if !ok || strings.TrimSpace(text) == "" {
		return ""
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	head := fmt.Sprintf("(cached context from %s: %s, so this may be out of date)", at.UTC().Format("2006-01-02 15:04 UTC"), why)
	// The cache is a file like any other under .intermem (planted, or
	// written by an older build): its lines are screened and escaped as a
	// fresh rendering's are, and a flagged line is withheld.
	var lines []string
	withheld := 0
	for _, l := range strings.Split(text, "\n") {
		l = safe(l)
		if len(screen.Check(l)) > 0 {
			withheld++
			continue
		}
		lines = append(lines, cli.Escape(l))
	}
	if withheld > 0 {
		lines = append([]string{withheldNotice(withheld)}, lines...)
	}
	limit := BytesPerToken * budget
	var sb strings.Builder
	sb.WriteString(head)
	n, chars := 0, Chars(head)
	for _, l := range lines {
		if sb.Len()+1+len(l) > limit || chars+1+Chars(l) >= MaxChars {
			break
		}
		sb.WriteByte('\n')
		sb.WriteString(l)
		chars += 1 + Chars(l)
		n++
	}
	if n == 0 {
		return ""
	}
	return sb.String()
}

// cachePath is the cache file of a state directory.
func cachePath(stateDir string) string { return filepath.Join(stateDir, CacheName) }
