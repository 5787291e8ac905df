package proof

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Fake secrets in the shapes of real ones, tagged FAKE.
const (
	keptPassword = "FAKEstg9Qm2Lw7"
	keptStripe   = "sk_live_FAKEwVM7XipTJbvnehTJEP6V"
	keptGitHub   = "ghp_FAKEnVqpW9YRjvIkXnhfBSssj7hiRTimbWq4"
	keptAWSID    = "AKIAFAKEZX3C7DA2QCLO"
	keptPEM1     = "MIIEowIBAAKCAQEAFAKES6qJ7EHzCmlj92FHUKYurqrIucWpIZGHeweOBOa6ciq9"
	keptPEM2     = "FAKEj2lI5WBmb4syTPVBJmqLAf4CiGIVUmqHIzcXRUIUFNio7jmXzo0123456789"
)

// TestSecretEntryNotPruned: an entry that holds a secret is never pruned
// from auto-memory, wherever the secret sits: a fact's text, the heading
// of its section (pruning the section's last fact would remove the
// heading), an index line pointing to a topic file (pruning the file
// removes the line), a topic file's description, its file name, and a
// private key written one bullet per line. "apply --approve all" promotes
// the other entries and prunes them; the plan lists the kept ones apart;
// approving one by number is refused with the way to do it; naming it
// with --promote-redacted copies its redacted text into a document and
// leaves the memory as it was. The user's only usable copy of a key is
// never left in a backup alone.
func TestSecretEntryNotPruned(t *testing.T) {
	memory := map[string]string{
		"MEMORY.md": "# Memory\n\n## Build\n- `make test` runs the whole suite.\n" +
			"- The staging DB password is " + keptPassword + " (rotate after the demo).\n\n" +
			"## Staging creds " + keptStripe + "\n- The staging API lives at api.staging.internal.\n\n" +
			"## Ops\n- Deploy key for the ops box:\n- -----BEGIN RSA PRIVATE KEY-----\n- " + keptPEM1 + "\n- " + keptPEM2 +
			"\n- -----END RSA PRIVATE KEY-----\n\n" +
			"## Topics\n- [Style](style.md) — tabs, not spaces\n- [Deploy](deploy.md) — push token " + keptGitHub + "\n",
		"style.md":        "---\nname: style\ndescription: Use tabs, not spaces, in Go files\nmetadata:\n  type: feedback\n---\nRun gofmt before committing.\n",
		"deploy.md":       "---\nname: deploy\ndescription: How releases are deployed\nmetadata:\n  type: project\n---\nReleases go out from main with `make release`.\n",
		"keys.md":         "---\nname: keys\ndescription: The token is " + keptPassword + "99 for the metrics gateway\nmetadata:\n  type: reference\n---\nAsk ops before rotating it.\n",
		keptAWSID + ".md": "---\nname: aws\ndescription: Where the deploy user's keys live\nmetadata:\n  type: reference\n---\nIn the team vault.\n",
	}
	f := newFixture(t, map[string]string{
		"CLAUDE.md": "# Project\n\n## Rules\n\n- Be brief.\n",
		"Makefile":  "test:\n\tgo test ./...\n",
	}, memory)
	f.sessions(3)

	plan := f.planJSON()
	offered := candidates(plan)
	sort.Strings(offered)
	if got := strings.Join(offered, " | "); len(offered) != 3 || !strings.Contains(got, "Deploy key for the ops box:") ||
		!strings.Contains(got, "`make test` runs the whole suite.") || !strings.Contains(got, "Use tabs, not spaces") {
		t.Errorf("candidates %q, want the three entries without a secret: the build fact, the deploy-key lead-in and style.md", offered)
	}
	var kept, keptN []string
	private, _ := plan["private"].([]any)
	for _, c := range private {
		m := c.(map[string]any)
		kept = append(kept, m["text"].(string))
		keptN = append(keptN, jsonNum(m["n"]))
	}
	// The fact, the one under the secret heading, the four bullets of the
	// key, keys.md, deploy.md (its index line) and the file named by a key.
	if len(kept) != 9 {
		t.Errorf("%d entries kept private, want 9: %q", len(kept), kept)
	}
	text := f.must("intermem-synthesize", "plan", "--max", "0").stdout
	if !strings.Contains(text, "Kept private: holds a secret (9 entries") {
		t.Errorf("the plan does not list the kept entries apart:\n%s", text)
	}

	before := f.tree()
	// Approving a kept entry by number is refused.
	if len(keptN) > 0 {
		r := f.run("", nil, "intermem-synthesize", "apply", "--approve", keptN[0], "--import-agents")
		if r.code == 0 || !strings.Contains(r.stderr, "--promote-redacted "+keptN[0]) {
			t.Errorf("apply --approve %s (kept private): exit %d, stderr %q; want a refusal naming --promote-redacted", keptN[0], r.code, r.stderr)
		}
	}
	f.must("intermem-synthesize", "apply", "--approve", "all", "--import-agents")
	after := f.tree()

	// Every file that holds a secret is byte for byte as it was; MEMORY.md
	// lost the build fact and the key's lead-in and kept every other line.
	for _, name := range []string{"keys.md", "deploy.md", keptAWSID + ".md"} {
		if after["mem/"+name] != before["mem/"+name] {
			t.Errorf("%s holds a secret (or an index line with one names it) and was changed or deleted", name)
		}
	}
	if _, ok := after["mem/style.md"]; ok {
		t.Errorf("style.md holds no secret and was approved: it should have been pruned")
	}
	idx := after["mem/MEMORY.md"]
	for _, line := range strings.Split(before["mem/MEMORY.md"], "\n") {
		gone := strings.Contains(line, "make test") || strings.Contains(line, "Deploy key for the ops box") || strings.Contains(line, "[Style]")
		if line != "" && !gone && !strings.Contains(idx, line) {
			t.Errorf("apply --approve all removed %q from MEMORY.md", line)
		}
		if gone && strings.Contains(idx, line) {
			t.Errorf("apply --approve all kept %q, which holds no secret", line)
		}
	}
	checkNoKeptSecret(t, after)

	// Named, a kept entry's redacted text is promoted, and memory stays.
	plan = f.planJSON()
	var n, kn string
	private, _ = plan["private"].([]any)
	for _, c := range private {
		m := c.(map[string]any)
		if strings.Contains(m["text"].(string), "staging DB password") {
			n, kn = jsonNum(m["n"]), m["text"].(string)
		}
	}
	if n == "" {
		t.Fatalf("the staging DB password is not kept private in the second plan")
	}
	if kn != "The staging DB password is [REDACTED:password] (rotate after the demo)." {
		t.Errorf("kept entry shown as %q", kn)
	}
	var rep struct {
		Promoted []struct {
			Text string
			Kept bool `json:"kept_in_memory"`
		}
		PrunedLines int `json:"pruned_lines"`
	}
	if err := json.Unmarshal([]byte(f.must("intermem-synthesize", "apply", "--promote-redacted", n, "--json").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Promoted) != 1 || !rep.Promoted[0].Kept || rep.PrunedLines != 0 {
		t.Errorf("--promote-redacted %s: %+v, want one promotion kept in memory and nothing pruned", n, rep)
	}
	final := f.tree()
	if final["mem/MEMORY.md"] != idx {
		t.Errorf("--promote-redacted changed MEMORY.md")
	}
	docs := ""
	for path, body := range final {
		if strings.HasPrefix(path, "proj/") {
			docs += body
		}
	}
	if !strings.Contains(docs, "The staging DB password is [REDACTED:password] (rotate after the demo).") {
		t.Errorf("the redacted text is in no document")
	}
	checkNoKeptSecret(t, final)
	if b, err := os.ReadFile(filepath.Join(f.memDir, keptAWSID+".md")); err != nil || string(b) != memory[keptAWSID+".md"] {
		t.Errorf("the file named by a key is gone or changed: %v", err)
	}
}

// checkNoKeptSecret: no document of the project holds any of the secrets.
func checkNoKeptSecret(t *testing.T, tree map[string]string) {
	t.Helper()
	for path, body := range tree {
		if !strings.HasPrefix(path, "proj/") || strings.HasPrefix(path, "proj/.intermem/") {
			continue
		}
		for _, s := range []string{keptPassword, keptStripe, keptGitHub, keptAWSID, keptPEM1, keptPEM2} {
			if strings.Contains(body, s) || strings.Contains(path, s) {
				t.Errorf("%s holds the secret %.12s…", path, s)
			}
		}
	}
}
