package turns

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLookupHostile holds Lookup, the hook front's reader, to Read's
// judgement of a hostile tally: a file Read finds unusable is unusable to
// Lookup, whichever session is asked for and wherever the bad line is.
func TestLookupHostile(t *testing.T) {
	const head = "intermem turns v2\n"
	for _, c := range []struct {
		name, content string
		want          Turn // s1's record
		ok            bool
	}{
		{"missing header", "s1\t1\t0\t1\t0\n", Turn{}, false},
		{"empty file", "", Turn{}, false},
		{"header only", head, Turn{}, true},
		{"last line cut short", head + "s1\t3\t0\t7\t0\ns1\t4\t0", Turn{Turns: 3, Seen: 7}, true},
		{"cut short before a whole field", head + "s1\t3\t0\t7\t0\ns1\t", Turn{Turns: 3, Seen: 7}, true},
		{"other sessions only", head + "s2\t5\t0\t9\t0\ns3\t1\t0\t9\t1\n", Turn{}, true},
		{"a prefix of the session is another", head + "s10\t5\t0\t9\t0\n", Turn{}, true},
		{"the session's last line wins", head + "s1\t1\t0\t1\t0\ns2\t8\t0\t2\t0\ns1\t2\t0\t3\t1\n", Turn{Turns: 2, Seen: 3, Ended: true}, true},
		{"wrong shape at the end", head + "s1\t1\t0\t1\t0\ns2\t1\t0\n", Turn{}, false},
		{"wrong shape at the end, another session", head + "s1\t1\t0\t1\t0\nzz\n", Turn{}, false},
		{"wrong shape in the middle", head + "s2\t1\t0\t1\t0\ns2\t1\tx\t1\t0\ns1\t2\t0\t3\t0\n", Turn{}, false},
		{"six fields", head + "s1\t1\t0\t1\t0\t0\n", Turn{}, false},
		{"negative count", head + "s1\t-1\t0\t1\t0\n", Turn{}, false},
		{"negative last", head + "s1\t1\t-1\t1\t0\n", Turn{}, false},
		{"ended 2", head + "s1\t1\t0\t1\t2\n", Turn{}, false},
		{"ended empty", head + "s1\t1\t0\t1\t\n", Turn{}, false},
		{"empty session", head + "\t1\t0\t1\t0\n", Turn{}, false},
		{"number too long", head + "s1\t" + strings.Repeat("1", 40) + "\t0\t1\t0\n", Turn{}, false},
		{"leading zeros past 32 bytes, as strconv takes them", head + "s1\t" + strings.Repeat("0", 40) + "1\t-" + strings.Repeat("0", 40) + "0\t+" + strings.Repeat("0", 40) + "7\t0\n", Turn{Turns: 1, Seen: 7}, true},
		{"a sign after leading zeros", head + "s1\t" + strings.Repeat("0", 40) + "+1\t0\t1\t0\n", Turn{}, false},
		{"number overflows", head + "s1\t1\t0\t99999999999999999999\t0\n", Turn{}, false},
		{"signed numbers, as strconv takes them", head + "s1\t+2\t+1\t-5\t0\n", Turn{Turns: 2, Last: 1, Seen: -5}, true},
		{"empty line", head + "s1\t1\t0\t1\t0\n\n", Turn{}, false},
		{"CR line ending", head + "s1\t1\t0\t1\t0\r\n", Turn{}, false},
	} {
		path := filepath.Join(t.TempDir(), Name)
		if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := Lookup(path, "s1")
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Lookup %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
		m, _, rok := Read(path) // these files are all under CompactBytes
		if rok != ok || m["s1"] != got {
			t.Errorf("%s: Read %+v %v, Lookup %+v %v", c.name, m["s1"], rok, got, ok)
		}
	}
}

// TestLookupFiles: a missing file is an empty usable tally; a link, a FIFO
// (not blocking), a directory and a file past MaxBytes are unusable.
func TestLookupFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	if tr, ok := Lookup(path, "s1"); !ok || tr != (Turn{}) {
		t.Fatalf("missing: %+v %v", tr, ok)
	}
	os.WriteFile(filepath.Join(dir, "elsewhere"), []byte(magic+"s1\t3\t0\t1\t0\n"), 0o600)
	if err := os.Symlink("elsewhere", path); err != nil {
		t.Fatal(err)
	}
	if tr, ok := Lookup(path, "s1"); ok {
		t.Errorf("read through a link: %+v", tr)
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := Lookup(path, "s1"); ok { // must not block
		t.Error("FIFO read as usable")
	}
	os.Remove(path)
	os.Mkdir(path, 0o700)
	if _, ok := Lookup(path, "s1"); ok {
		t.Error("directory read as usable")
	}
	os.Remove(path)
	// Past CompactBytes: the full hook rewrites it compacted (Read returns
	// its records, not usable as it is), the front still counts on it.
	var b bytes.Buffer
	b.WriteString(magic)
	for b.Len() <= CompactBytes {
		b.WriteString("s1\t1\t0\t1\t0\n")
	}
	os.WriteFile(path, b.Bytes(), 0o600)
	if tr, ok := Lookup(path, "s1"); !ok || tr.Turns != 1 {
		t.Errorf("a file past CompactBytes, within MaxBytes: %+v %v", tr, ok)
	}
	if m, _, ok := Read(path); ok || len(m) != 1 {
		t.Errorf("Read of a file past CompactBytes: %d sessions, usable %v (want its records, not usable)", len(m), ok)
	}
	// Past MaxBytes: the front hands the turn over.
	for b.Len() <= MaxBytes {
		b.WriteString("s1\t1\t0\t1\t0\n")
	}
	os.WriteFile(path, b.Bytes(), 0o600)
	if _, ok := Lookup(path, "s1"); ok {
		t.Error("a file past MaxBytes read as usable")
	}
	if m, _, ok := Read(path); ok || len(m) != 1 {
		t.Errorf("Read of a file past MaxBytes: %d sessions, usable %v (want its records, unusable)", len(m), ok)
	}
	// Past MaxRead: not read at all.
	for b.Len() <= MaxRead {
		b.WriteString("s1\t1\t0\t1\t0\n")
	}
	os.WriteFile(path, b.Bytes(), 0o600)
	if _, ok := Lookup(path, "s1"); ok {
		t.Error("a huge file read as usable")
	}
	if m, _, ok := Read(path); ok || len(m) != 0 {
		t.Errorf("Read of a huge file: %d sessions, usable %v", len(m), ok)
	}
}

// TestFindAllocatesNothing: the front's lookup costs no allocation per
// line (a quiet turn's process pays every allocation in page faults).
func TestFindAllocatesNothing(t *testing.T) {
	var b []byte
	b = append(b, magic...)
	for i := 0; i < 300; i++ {
		b = appendLine(b, "0f8fad5b-d9cb-469f-a165-70867728950e", Turn{Turns: i, Last: i - i%10, Seen: 1795721457})
		b = appendLine(b, "7c9e6679-7425-40de-944b-e07fc1f90ae7", Turn{Turns: i, Seen: 1795721458})
	}
	var got Turn
	n := testing.AllocsPerRun(20, func() { got, _ = Find(b, "7c9e6679-7425-40de-944b-e07fc1f90ae7") })
	if n != 0 {
		t.Errorf("Find: %v allocations, want 0", n)
	}
	if got != (Turn{Turns: 299, Seen: 1795721458}) {
		t.Errorf("Find: %+v", got)
	}
}

// FuzzFind holds Find and Decode to reference, the decoder the tally had
// before parseLine (fields by bytes.Split, numbers by strconv on strings):
// the same verdict on any bytes, and the same record for the session.
func FuzzFind(f *testing.F) {
	f.Add([]byte(magic+"s1\t1\t0\t100\t0\ns2\t4\t3\t101\t0\ns1\t2\t0\t102\t1\n"), "s1")
	f.Add([]byte(magic+"s1\t1\t0\t100\t0\ns1\t9"), "s1")
	f.Add([]byte(magic+"s1\t+1\t-0\t-100\t0\n"), "s1")
	f.Add([]byte(magic+"\t1\t0\t1\t0\n"), "")
	f.Add([]byte(`{"s1":{"turns":3}}`), "s1")
	f.Fuzz(func(t *testing.T, b []byte, session string) {
		got, ok := Find(b, session)
		m, dok := Decode(b)
		ref, rok := reference(b)
		if ok != rok || dok != rok {
			t.Fatalf("Find ok %v, Decode ok %v, reference ok %v", ok, dok, rok)
		}
		if ok && (got != ref[session] || len(m) != len(ref)) {
			t.Fatalf("Find %+v, Decode %d sessions, reference %+v of %d", got, len(m), ref[session], len(ref))
		}
		for id, tr := range ref {
			if m[id] != tr {
				t.Fatalf("Decode %q: %+v, reference %+v", id, m[id], tr)
			}
		}
	})
}

// reference decodes a tally as the format says, the plain way.
func reference(b []byte) (map[string]Turn, bool) {
	m := map[string]Turn{}
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return nil, false
	}
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			break
		}
		rest = after
		f := bytes.Split(line, []byte("\t"))
		if len(f) != 5 || len(f[0]) == 0 || (string(f[4]) != "0" && string(f[4]) != "1") {
			return nil, false
		}
		var t Turn
		var err1, err2, err3 error
		t.Turns, err1 = strconv.Atoi(string(f[1]))
		t.Last, err2 = strconv.Atoi(string(f[2]))
		t.Seen, err3 = strconv.ParseInt(string(f[3]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || t.Turns < 0 || t.Last < 0 {
			return nil, false
		}
		t.Ended = f[4][0] == '1'
		m[string(f[0])] = t
	}
	return m, true
}
