package automem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want LoadInfo
	}{
		{"empty", "", LoadInfo{}},
		{"one line no newline", "abc", LoadInfo{1, 3, 1, 3, false}},
		{"one line", "abc\n", LoadInfo{1, 4, 1, 4, false}},
		{"CRLF counts the CR", "a\r\nb\r\n", LoadInfo{2, 6, 2, 6, false}},
		{"CJK is one unit each", "한국어\n中文\n", LoadInfo{2, 7, 2, 7, false}},
		{"emoji outside the BMP is two units", "🚨✅⚠️\n", LoadInfo{1, 6, 1, 6, false}},
		{"invalid bytes count one each", "\xff\xfe\n", LoadInfo{1, 3, 1, 3, false}},
		{"first line over the char cap loads nothing", strings.Repeat("x", 25001) + "\nb\n", LoadInfo{2, 25004, 0, 0, true}},
		{"exactly 25,000 chars fit", strings.Repeat("x", 24999) + "\nb\n", LoadInfo{2, 25002, 1, 25000, true}},
	}
	for _, tt := range tests {
		if got := Load([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: Load = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestLoadCharCap is the observed Claude Code behaviour: 120 lines of 301
// chars (300 + "\n") load up to line 83, because 83×301 = 24,983 ≤ 25,000
// < 84×301.
func TestLoadCharCap(t *testing.T) {
	var b strings.Builder
	for i := range 120 {
		line := fmt.Sprintf("- fact %03d ", i)
		b.WriteString(line + strings.Repeat("x", 300-len(line)) + "\n")
	}
	got := Load([]byte(b.String()))
	want := LoadInfo{Lines: 120, Chars: 120 * 301, LoadedLines: 83, LoadedChars: 83 * 301, Truncated: true}
	if got != want {
		t.Errorf("Load = %+v, want %+v", got, want)
	}
}

// TestBeyondCap writes a 260-line MEMORY.md: Claude Code loads lines
// 1..200, so exactly the entries starting on lines 201..260 are beyond the
// cap.
func TestBeyondCap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 260; i++ {
		fmt.Fprintf(&b, "- fact number %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Load.Lines != 260 || d.Load.LoadedLines != 200 || !d.Load.Truncated {
		t.Fatalf("Load = %+v", d.Load)
	}
	beyond := d.BeyondCap()
	if len(beyond) != 60 {
		t.Fatalf("BeyondCap has %d entries, want 60", len(beyond))
	}
	for i, e := range beyond {
		if e.StartLine != 201+i || e.Text != fmt.Sprintf("fact number %d", 201+i) {
			t.Fatalf("beyond[%d] = line %d %q", i, e.StartLine, e.Text)
		}
	}
}

// loadReference is Claude Code's rule written the obvious way, to check
// Load against: split on "\n", measure each line in UTF-16 units.
func loadReference(content []byte) LoadInfo {
	var info LoadInfo
	if len(content) == 0 {
		return info
	}
	s := string(content)
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	units := func(p string) int {
		n := 0
		for len(p) > 0 {
			r, size := utf8.DecodeRuneInString(p)
			if r == utf8.RuneError && size == 1 {
				n++
			} else {
				n += len(utf16.Encode([]rune{r}))
			}
			p = p[size:]
		}
		return n
	}
	info.Lines = len(parts)
	stopped := false
	for i, p := range parts {
		u := units(p)
		info.Chars += u
		if !stopped && i < MaxLoadLines && info.LoadedChars+u <= MaxLoadChars {
			info.LoadedLines++
			info.LoadedChars += u
		} else {
			stopped = true
		}
	}
	info.Truncated = info.LoadedLines < info.Lines
	return info
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte("a\nb"))
	f.Add([]byte("🚨\r\n\xff\n"))
	f.Add([]byte(strings.Repeat("한\n", 300)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Load(b), loadReference(b); got != want {
			t.Fatalf("Load = %+v, reference = %+v", got, want)
		}
	})
}
