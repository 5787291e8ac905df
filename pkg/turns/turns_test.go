package turns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestStopCadence(t *testing.T) {
	var tr Turn
	var due []int
	for i := 0; i < 7; i++ {
		var d bool
		tr, d = Stop(tr, 3)
		if d {
			due = append(due, tr.Turns)
			tr.Last = tr.Turns
		}
	}
	if fmt.Sprint(due) != "[3 6]" {
		t.Fatalf("checkpoint turns %v, want [3 6]", due)
	}
}

func TestAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), Name)
	if m, size, ok := Read(path); !ok || size != 0 || len(m) != 0 {
		t.Fatalf("missing file: %v %d %v", m, size, ok)
	}
	if err := Append(path, "s1", Turn{Turns: 1, Seen: 100}); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "s2", Turn{Turns: 4, Last: 3, Seen: 101}); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "s1", Turn{Turns: 2, Seen: 102, Ended: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "intermem turns v2\ns1\t1\t0\t100\t0\ns2\t4\t3\t101\t0\ns1\t2\t0\t102\t1\n"
	if string(b) != want {
		t.Fatalf("file %q, want %q", b, want)
	}
	m, size, ok := Read(path)
	if !ok || size != int64(len(want)) || m["s1"] != (Turn{Turns: 2, Seen: 102, Ended: true}) || m["s2"] != (Turn{Turns: 4, Last: 3, Seen: 101}) {
		t.Fatalf("read %v %d %v", m, size, ok)
	}
	// An append cut short is ignored.
	os.WriteFile(path, []byte(want+"s1\t9\t0"), 0o600)
	if m, _, ok := Read(path); !ok || m["s1"].Turns != 2 {
		t.Fatalf("cut line: %v %v", m, ok)
	}
}

func TestHostileFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	for name, content := range map[string]string{
		"old json":      `{"s1":{"turns":3,"last":0,"seen":1}}`,
		"bad number":    "intermem turns v2\ns1\tx\t0\t1\t0\n",
		"negative":      "intermem turns v2\ns1\t-1\t0\t1\t0\n",
		"fields":        "intermem turns v2\ns1\t1\t0\t1\n",
		"ended":         "intermem turns v2\ns1\t1\t0\t1\t2\n",
		"empty session": "intermem turns v2\n\t1\t0\t1\t0\n",
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if m, _, ok := Read(path); ok || len(m) != 0 {
			t.Errorf("%s: read as usable: %v", name, m)
		}
	}
	os.Remove(path)
	os.WriteFile(filepath.Join(dir, "elsewhere"), []byte("intermem turns v2\n"), 0o600)
	os.Symlink("elsewhere", path)
	if _, _, ok := Read(path); ok {
		t.Error("read through a link")
	}
	if err := Append(path, "s1", Turn{Turns: 1}); err == nil {
		t.Error("appended through a link")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "elsewhere")); string(b) != "intermem turns v2\n" {
		t.Errorf("link target written: %q", b)
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := Read(path); ok { // must not block
		t.Error("FIFO read as usable")
	}
	if err := Append(path, "s1", Turn{Turns: 1}); err == nil { // must not block
		t.Error("appended to a FIFO")
	}
	if err := Append(filepath.Join(dir, "x"), "a\tb", Turn{}); err != ErrBadSession {
		t.Errorf("tab in session: %v", err)
	}
}

func TestEncodeKeepsMostRecent(t *testing.T) {
	m := map[string]Turn{}
	for i := 0; i < MaxSessions+2; i++ {
		m[fmt.Sprintf("s%03d", i)] = Turn{Turns: 1, Seen: int64(i)}
	}
	b := Encode(m)
	got, ok := Decode(b)
	if !ok || len(got) != MaxSessions {
		t.Fatalf("%d sessions, ok %v", len(got), ok)
	}
	if _, kept := got["s000"]; kept || strings.Count(string(b), "\n") != MaxSessions+1 {
		t.Fatal("the oldest sessions were kept")
	}
	if _, kept := got[fmt.Sprintf("s%03d", MaxSessions+1)]; !kept {
		t.Fatal("the newest session was dropped")
	}
}
