package written

import (
	"bytes"
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

func TestResume(t *testing.T) {
	// Parsed up to the open last line; the append completes it.
	es, _, next := Source{}.ParseFrom(LogPath, strings.NewReader(log), source.Cursor{})
	if len(es) != 2 || next.Line != 7 || next.Offset != int64(strings.LastIndex(log, "\n")+1) {
		t.Fatalf("first parse: %d entries, cursor %+v", len(es), next)
	}
	full := log + "\n"
	es, _, next = Source{}.ParseFrom(LogPath, strings.NewReader(full[next.Offset:]), next)
	if len(es) != 1 || es[0].ID != "c1de124b816f280f" || es[0].Line != 7 || next.Offset != int64(len(full)) || next.Line != 8 {
		t.Fatalf("resumed parse: %+v, cursor %+v", es, next)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		es, _ := Source{}.Parse(LogPath, b)
		for _, e := range es {
			if e.ID != ID(e.Fields["type"], e.Title, e.Text) {
				t.Fatalf("entry %s keeps an id that is not its content's", e.ID)
			}
		}
		// A parse resumed anywhere a complete line ends agrees with the
		// whole parse on what follows.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			_, _, at := Source{}.ParseFrom(LogPath, bytes.NewReader(b[:i+1]), source.Cursor{})
			rest, _, _ := Source{}.ParseFrom(LogPath, bytes.NewReader(b[i+1:]), at)
			if len(es) > 0 && len(rest) > 0 && rest[len(rest)-1].ID != es[len(es)-1].ID {
				t.Fatalf("resumed parse ends with %s, whole parse with %s", rest[len(rest)-1].ID, es[len(es)-1].ID)
			}
		}
	})
}
