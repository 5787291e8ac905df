package intermem_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdLinkCheck is "linkcheck FILE...": every relative markdown link in the
// files (outside fenced code and code spans) names a file that exists,
// relative to the file it is in, and no [[wikilink]] is left (nothing
// resolves one in a committed document). "! linkcheck" asserts the
// opposite. It is written apart from the code under test: a regular
// expression, not intermem's link parser.
func cmdLinkCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: linkcheck FILE...")
	}
	var broken []string
	for _, name := range args {
		path := ts.MkAbs(name)
		b, err := os.ReadFile(path)
		ts.Check(err)
		broken = append(broken, brokenMarkdownLinks(path, string(b))...)
	}
	switch {
	case neg && len(broken) == 0:
		ts.Fatalf("no broken link in %s", strings.Join(args, " "))
	case !neg && len(broken) > 0:
		ts.Fatalf("broken links:\n%s", strings.Join(broken, "\n"))
	}
}

var (
	mdLinkRE   = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	wikiLinkRE = regexp.MustCompile(`\[\[[^\]]+\]\]`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
)

// brokenMarkdownLinks lists the relative links of a markdown file that
// name no file, and its wikilinks.
func brokenMarkdownLinks(path, text string) []string {
	var out []string
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, w := range wikiLinkRE.FindAllString(line, -1) {
			out = append(out, filepath.Base(path)+":"+itoaLine(i)+": "+w)
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
			dest := m[1]
			if k := strings.IndexByte(dest, '#'); k >= 0 {
				dest = dest[:k]
			}
			if dest == "" || strings.Contains(dest, ":") || strings.HasPrefix(dest, "/") || strings.HasPrefix(dest, "~") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(dest))); err != nil {
				out = append(out, filepath.Base(path)+":"+itoaLine(i)+": "+m[0])
			}
		}
	}
	return out
}

func itoaLine(i int) string { return strconv.Itoa(i + 1) }
