package redact

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"AKIA" + fake("nk", updA, 16) + ".md":              "[REDACTED:aws-access-key].md",
		"ref_ghp_" + fake("ng", alnumA, 36) + ".md":        "ref_[REDACTED:github-token].md",
		"sk_live_" + fake("ns", alnumA, 24) + "-notes.md":  "[REDACTED:stripe-key]-notes.md",
		"FAKE4MseF7KIYn.md":                                "[REDACTED:secret].md",
		"Summer" + "Xk9#mPq2vL!" + ".md":                   "[REDACTED:secret].md",
		"deadbeef" + fake("nh", hexA, 24) + ".md":          "[REDACTED:secret].md",
		"keys_" + fake("nb", urlA, 28) + ".md":             "keys_[REDACTED:secret].md",
		"feedback_commit_style.md":                         "feedback_commit_style.md",
		"reference_isIBAvailable.md":                       "reference_isIBAvailable.md",
		"session_2026-06-07_retune-elementtree-port-T1.md": "session_2026-06-07_retune-elementtree-port-T1.md",
		"MyProjectV2Notes.md":                              "MyProjectV2Notes.md",
		"bd976eeb-1b2c-4d5e-8f90-a1b2c3d4e5f6.md":          "bd976eeb-1b2c-4d5e-8f90-a1b2c3d4e5f6.md",
		"0223a0c_fix.md":                                   "0223a0c_fix.md",
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNameCorpus: no file name of the corpus, and no memory file a corpus
// file links to, is redacted.
func TestNameCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "corpus")
	link := regexp.MustCompile(`\]\((?:\./)?([^)/ ]+\.md)`)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names[d.Name()] = true
		b, err := os.ReadFile(p)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 600 {
		t.Fatalf("only %d names", len(names))
	}
	for n := range names {
		if got := Name(n); got != n && !strings.Contains(n, Marker) {
			t.Errorf("Name(%q) = %q", n, got)
		}
	}
	t.Logf("%d names", len(names))
}
