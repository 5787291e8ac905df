package written

import (
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/source"
)

// A log as a hand edit, a copy from elsewhere and an interrupted append
// leave it: good records, a record whose id was forged, a line of another
// shape, a record with a field the format does not have, and a last line
// without its newline.
const log = `{"id":"cf803fb1c81c4df6","type":"decision","title":"Use bbolt for the store","content":"The store is one bbolt file: ` + "`.intermem/intermem.db`" + `, opened by ` + "`pkg/store/store.go`" + `.","tags":["storage"],"files":["pkg/store/store.go"],"source":"compound","agent_id":"agent-7","session_id":"sess-1","created_at":"2026-11-01T09:00:00Z"}
{"id":"0000000000000000","type":"style","title":"Tabs in Go","content":"Go code is indented with tabs; gofmt decides.","source":"cli","created_at":"2026-11-01T10:00:00Z"}
not json at all
{"id":"x","type":"style","title":"T","content":"C","source":"cli","created_at":"2026-11-01T10:00:00Z","admin":true}
{"id":"x","type":"poem","title":"T","content":"C","source":"cli","created_at":"2026-11-01T10:00:00Z"}

{"id":"c1de124b816f280f","type":"insight","title":"Builds are static","content":"Every binary is built with CGO_ENABLED=0.","source":"cli","created_at":"2026-11-01T10:00:00Z"}`

func TestParse(t *testing.T) {
	es, ps := Source{}.Parse(LogPath, []byte(log))
	// The ids are written by hand: sha256sum of "written\0type\0title\0content".
	if len(es) != 2 || es[0].ID != "cf803fb1c81c4df6" || es[1].ID != "9803fa314fce933d" {
		t.Fatalf("entries = %+v", es)
	}
	e := es[0]
	if e.Source != Name || e.Kind != source.Fact || e.Line != 1 || e.Path != LogPath || !e.Promotable ||
		e.Title != "Use bbolt for the store" || e.Fields["source"] != "compound" || e.Fields["agent_id"] != "agent-7" ||
		e.Fields["session_id"] != "sess-1" || e.Fields["type"] != "decision" || e.Created.Format("2006-01-02T15:04:05Z") != "2026-11-01T09:00:00Z" {
		t.Errorf("entry = %+v", e)
	}
	if got := strings.Join(e.Citations, " | "); got != "pkg/store/store.go | .intermem/intermem.db" {
		t.Errorf("citations = %q", got)
	}
	if es[1].Line != 2 {
		t.Errorf("second entry at line %d, want 2", es[1].Line)
	}
	if len(ps) != 1 || ps[0].Line != 3 || ps[0].Message != "3 lines are not a written memory; ignored" {
		t.Errorf("problems = %v", ps)
	}
}

// TestRetire: a retire line takes its memory out of the set, a record
// line of the same memory appended later brings it back, at that line;
// a retire line that names no id or gives no known reason is a bad line.
func TestRetire(t *testing.T) {
	a := `{"id":"cf803fb1c81c4df6","type":"decision","title":"Use bbolt for the store","content":"The store is one bbolt file.","source":"cli","created_at":"2026-11-01T09:00:00Z"}`
	b := `{"id":"9803fa314fce933d","type":"style","title":"Tabs in Go","content":"Go code is indented with tabs; gofmt decides.","source":"cli","created_at":"2026-11-01T10:00:00Z"}`
	rec, err := Decode([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	id := rec.ID
	retire := `{"retired":"` + id + `","reason":"promoted","at":"2026-11-02T09:00:00Z"}`
	bogus := `{"retired":"` + id + `","reason":"because","at":"2026-11-02T09:00:00Z"}` + "\n" +
		`{"retired":"ZZ","reason":"promoted","at":"2026-11-02T09:00:00Z"}`
	log := a + "\n" + b + "\n" + retire + "\n" + bogus + "\n"
	es, ps := Source{}.Parse(LogPath, []byte(log))
	if len(es) != 1 || es[0].Title != "Tabs in Go" || es[0].Line != 2 {
		t.Fatalf("after the retire line: %+v", es)
	}
	if len(ps) != 1 || ps[0].Line != 4 || ps[0].Message != "2 lines are not a written memory; ignored" {
		t.Errorf("problems = %v", ps)
	}
	if Holds([]byte(log), id) {
		t.Error("Holds: the retired memory is still held")
	}
	if r, retired := Last([]byte(log), id); r == nil || !retired || r.Title != "Use bbolt for the store" {
		t.Errorf("Last = %+v, %v", r, retired)
	}
	// Written again: back, at its new line, after the style rule.
	log += a + "\n"
	es, _ = Source{}.Parse(LogPath, []byte(log))
	if len(es) != 2 || es[0].Title != "Tabs in Go" || es[1].Title != "Use bbolt for the store" || es[1].Line != 6 {
		t.Fatalf("written again: %+v", es)
	}
	if !Holds([]byte(log), id) {
		t.Error("Holds: the memory written again is not held")
	}
	if rs, bad := Records([]byte(log)); len(rs) != 2 || bad != 2 {
		t.Errorf("Records = %d records, %d bad", len(rs), bad)
	}
	// A retire line for a memory the log never held retires nothing.
	if r, retired := Last([]byte(retire+"\n"), id); r != nil || retired {
		t.Errorf("Last of a lone retire line = %+v, %v", r, retired)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := Record{Type: "insight", Title: "Builds are static", Content: "Every binary is built with CGO_ENABLED=0.", Source: "cli"}
	line, err := Encode(&r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"c1de124b816f280f","type":"insight","title":"Builds are static","content":"Every binary is built with CGO_ENABLED=0.","source":"cli","created_at":"0001-01-01T00:00:00Z"}` + "\n"
	if string(line) != want {
		t.Fatalf("Encode = %s, want %s", line, want)
	}
	if !Holds([]byte("junk\n"+string(line)), "c1de124b816f280f") || Holds([]byte(log), "c1de124b816f280f") {
		t.Error("Holds disagrees with the log")
	}
	if _, err := Encode(&Record{Type: "insight", Title: "a\nb", Content: "c"}); err == nil {
		t.Error("a two-line title was encoded")
	}
}

func TestLongLine(t *testing.T) {
	long := `{"id":"x","type":"style","title":"T","content":"` + strings.Repeat("a", MaxLine) + `","source":"cli","created_at":"2026-11-01T10:00:00Z"}` + "\n"
	good := `{"id":"x","type":"style","title":"T","content":"C","source":"cli","created_at":"2026-11-01T10:00:00Z"}` + "\n"
	es, ps := Source{}.Parse(LogPath, []byte(long+good))
	if len(es) != 1 || es[0].Line != 2 || len(ps) != 1 {
		t.Fatalf("entries %+v, problems %v", es, ps)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(log))
	f.Add([]byte("{}\n{\"type\":\"style\"}\n"))
	f.Add([]byte(`{"retired":"cf803fb1c81c4df6","reason":"promoted","at":"2026-11-02T09:00:00Z"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, _ := Source{}.Parse(LogPath, b)
		for _, e := range es {
			if e.ID != ID(e.Fields["type"], e.Title, e.Text) {
				t.Fatalf("entry %s keeps an id that is not its content's", e.ID)
			}
		}
		// No id is listed twice, and every entry is one Holds finds held.
		seen := map[string]bool{}
		for _, e := range es {
			if seen[e.ID] || !Holds(b, e.ID) {
				t.Fatalf("entry %s listed twice or not held", e.ID)
			}
			seen[e.ID] = true
		}
	})
}

// TestOut: the memories out of the set, each with its last record and the
// retire line that took it out; one written again is not out.
func TestOut(t *testing.T) {
	a := `{"id":"x","type":"decision","title":"A","content":"Alpha.","source":"cli","created_at":"2026-11-01T09:00:00Z"}`
	b := `{"id":"x","type":"decision","title":"B","content":"Beta.","source":"cli","created_at":"2026-11-01T09:00:00Z"}`
	ra, _ := Decode([]byte(a))
	rb, _ := Decode([]byte(b))
	retire := func(id, why string) string {
		return `{"retired":"` + id + `","reason":"` + why + `","at":"2026-11-02T09:00:00Z"}`
	}
	log := strings.Join([]string{a, b, retire(ra.ID, "promoted"), retire(rb.ID, "archived"), a, retire(rb.ID, "archived")}, "\n") + "\n"
	out := Out([]byte(log))
	if len(out) != 1 || out[0].Record.Title != "B" || out[0].Retire.Reason != "archived" {
		t.Fatalf("Out = %+v", out)
	}
	log += retire(ra.ID, "archived") + "\n"
	out = Out([]byte(log))
	if len(out) != 2 || out[0].Record.Title != "B" || out[1].Record.Title != "A" || out[1].Retire.Reason != "archived" {
		t.Fatalf("Out after archiving A = %+v", out)
	}
}
