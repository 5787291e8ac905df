package automem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fake secrets, tagged FAKE, in the shapes of real ones.
const (
	fakeStripe = "sk_live_FAKEwVM7XipTJbvnehTJEP6V"
	fakeGitHub = "ghp_FAKEnVqpW9YRjvIkXnhfBSssj7hiRTimbWq4"
	fakeAWSID  = "AKIAFAKEZX3C7DA2QCLO"
	fakePass   = "FAKEaP3IL08NS9"
)

func TestRedactFields(t *testing.T) {
	src := "# Memory\n\n## Staging creds " + fakeStripe + "\n- host is db.internal\n\n" +
		"## Ops\n- [Keys](" + fakeAWSID + ".md) — see the file\n" +
		"- The staging DB password is " + fakePass + "\n" +
		"- deploy key:\n- -----BEGIN RSA PRIVATE KEY-----\n" +
		"- MIIEowIBAAKCAQEAFAKES6qJ7EHzCmlj92FHUKYurqrIucWpIZGHeweOBOa6ciq9\n" +
		"- FAKEj2lI5WBmb4syTPVBJmqLAf4CiGIVUmqHIzcXRUIUFNio7jmXzo0123456789\n" +
		"- -----END RSA PRIVATE KEY-----\n" +
		"- `make test` before pushing\n"
	f := Parse(IndexName, []byte(src))
	type want struct {
		text, section, link string
		secret              bool
	}
	wants := []want{
		{"host is db.internal", "Staging creds [REDACTED:stripe-key]", "", true}, // its heading goes with it
		{"[Keys]([REDACTED:aws-access-key].md) — see the file", "Ops", "[REDACTED:aws-access-key].md", true},
		{"The staging DB password is [REDACTED:password]", "Ops", "", true},
		{"deploy key:", "Ops", "", false},
		{"[REDACTED:private-key]", "Ops", "", true},
		{"[REDACTED:private-key]", "Ops", "", true},
		{"[REDACTED:private-key]", "Ops", "", true},
		{"[REDACTED:private-key]", "Ops", "", true},
		{"`make test` before pushing", "Ops", "", false},
	}
	if len(f.Entries) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(f.Entries), len(wants), f.Entries)
	}
	for i, w := range wants {
		e := f.Entries[i]
		if e.Text != w.text || e.Section != w.section || e.Link != w.link || e.Secret != w.secret {
			t.Errorf("entry %d: text %q section %q link %q secret %v\nwant text %q section %q link %q secret %v",
				i, e.Text, e.Section, e.Link, e.Secret, w.text, w.section, w.link, w.secret)
		}
	}
	if got := f.Entries[1].RawLink(); got != fakeAWSID+".md" {
		t.Errorf("RawLink = %q, want the name on disk", got)
	}
	if got := f.Headings[1].Title; got != "Staging creds [REDACTED:stripe-key]" {
		t.Errorf("heading title %q", got)
	}
	// Pruning still works on the exact bytes: the last fact goes, nothing else moves.
	out := string(f.Remove(f.Entries[8].ID))
	if want := strings.Replace(src, "- `make test` before pushing\n", "", 1); out != want {
		t.Errorf("Remove changed more than the entry:\n%s", out)
	}
}

func TestRedactMemoryFile(t *testing.T) {
	src := "---\nname: deploy token " + fakeGitHub + "\ndescription: >\n  The staging DB password\n  is " + fakePass +
		"\napi_key: \"FAKEakD6eKPBwTfPHUjDInc7JaJEYM95\"\nmetadata:\n  type: reference\n---\n## Token " + fakeGitHub + "\nUse it for pushes.\n"
	f := Parse("ref_"+fakeGitHub+".md", []byte(src))
	e := f.Entries[0]
	if e.Kind != Memory || !e.Secret {
		t.Fatalf("kind %s secret %v, want a secret Memory", e.Kind, e.Secret)
	}
	for name, got := range map[string]string{"Name": e.Name, "Section": e.Section, "Description": e.Description, "Text": e.Text, "File": e.File,
		"SafeName": f.SafeName, "api_key": f.Frontmatter.Fields["api_key"], "Heading": f.Headings[0].Title} {
		for _, secret := range []string{fakeGitHub, fakePass, "FAKEakD6eKPBwTfPHUjDInc7JaJEYM95"} {
			if strings.Contains(got, secret[:12]) {
				t.Errorf("%s = %q holds a secret", name, got)
			}
		}
	}
	if e.Name != "deploy token [REDACTED:github-token]" || e.Description != "The staging DB password is [REDACTED:password]" ||
		e.Text != "## Token [REDACTED:github-token]\nUse it for pushes." || e.File != "ref_[REDACTED:github-token].md" || e.Type != "reference" {
		t.Errorf("got name %q description %q text %q file %q type %q", e.Name, e.Description, e.Text, e.File, e.Type)
	}
	if f.Name != "ref_"+fakeGitHub+".md" {
		t.Errorf("Name %q must stay the name on disk", f.Name)
	}
}

// TestPointedSecret: a one-memory file whose index line holds a secret is
// Secret in a scanned directory, since pruning it removes that line.
func TestPointedSecret(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		IndexName:         "- [Deploy](deploy.md) — token " + fakeGitHub + "\n- [Style](style.md) — tabs\n",
		"deploy.md":       "---\nname: deploy\ndescription: how we deploy\n---\nRun make deploy.\n",
		"style.md":        "---\nname: style\ndescription: tabs, not spaces\n---\nUse gofmt.\n",
		fakeAWSID + ".md": "---\nname: keys\ndescription: where keys live\n---\nIn the vault.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range d.Entries() {
		if e.Kind == Memory {
			got[e.File] = e.Secret
		}
	}
	want := map[string]bool{"deploy.md": true, "style.md": false, "[REDACTED:aws-access-key].md": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: Secret %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(d.Dangling()) != 0 {
		t.Errorf("pointers to files that exist are dangling: %v", d.Dangling())
	}
}
