package continuity

import (
	"strings"
	"testing"
)

const file = `{"kind":"head","phase":1,"checkpoint":"phase1-20261101-100000"}
{"kind":"phase","n":0,"name":"Discovery","summary":"Requirements gathered.","artifacts":["docs/prd.md"],"issues":["Vendor undecided."],"started":"2026-11-01T09:00:00Z","closed":"2026-11-01T10:00:00Z"}
{"kind":"phase","n":1,"name":"Design","started":"2026-11-01T10:00:00Z"}
{"kind":"decision","id":"d0123456789ab","text":"bbolt for the store","why":"one file, no server","phase":0,"time":"2026-11-01T09:30:00Z"}
not json
{"kind":"checkpoint","id":"cp-20261101T110000Z-aa","summary":"Half the API is written.","time":"2026-11-01T11:00:00Z"}
{"kind":"decision","text":"no id"}
{"kind":"surprise","id":"x"}
`

// Parse makes one entry per decision, closed phase and saved checkpoint;
// the head, an open phase and malformed records make none, and a line that
// is not JSON is one problem.
func TestParse(t *testing.T) {
	es, probs := Source{}.Parse(Path, []byte(file))
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(es), es)
	}
	ph, dec, cp := es[0], es[1], es[2]
	if ph.Title != "Phase 0 closeout: Discovery" || ph.Line != 2 ||
		ph.Text != "Requirements gathered.\nArtifacts: docs/prd.md\nIssue: Vendor undecided." ||
		strings.Join(ph.Tags, ",") != "phase-closeout,phase-0" || ph.Fields["phase"] != "0" {
		t.Errorf("phase entry: %+v", ph)
	}
	if dec.Title != "bbolt for the store" || dec.Text != "bbolt for the store\nWhy: one file, no server" ||
		dec.Fields["why"] != "one file, no server" || dec.Fields["type"] != "decision" || dec.Line != 4 ||
		strings.Join(dec.Tags, ",") != "decision,phase-0" {
		t.Errorf("decision entry: %+v", dec)
	}
	if cp.Title != "Checkpoint: Half the API is written." || cp.Line != 6 || len(cp.Tags) != 1 {
		t.Errorf("checkpoint entry: %+v", cp)
	}
	if len(probs) != 1 || probs[0].Line != 5 || probs[0].Message != "1 line is not a JSON record; skipped" {
		t.Errorf("problems: %+v", probs)
	}
	// Ids come from the record's kind and key, never from the file's order.
	again, _ := Source{}.Parse(Path, []byte("\n\n"+file))
	if again[1].ID != dec.ID || again[1].Line != 6 {
		t.Errorf("id moved with the line: %s vs %s", again[1].ID, dec.ID)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(file))
	f.Add([]byte(`{"kind":"phase","n":-1,"closed":"2026-01-01T00:00:00Z","summary":"x","name":"` + strings.Repeat("é", 100) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, _ := Source{}.Parse(Path, b)
		for _, e := range es {
			if e.ID == "" || e.Source != Name || len(e.Title) > 120 {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}
