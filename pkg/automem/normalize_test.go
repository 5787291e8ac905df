package automem

import (
	"strings"
	"testing"
)

func TestNormalizeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  a  b\t\tc \r\n d  ", "a b c d"},
		{"use make <!-- intermem:8ed6945e -->", "use make"},
		{"<!--intermem:ABCDEF0123456789-->x", "x"},
		{"keep <!-- intermem: --> and <!-- other:1 -->", "keep <!-- intermem: --> and <!-- other:1 -->"},
		{"a\u00a0b\u3000c\u2003d\u2028e\u0085f", "a b c d e f"},
		{"Case Sensitive", "Case Sensitive"},
		{"bad \xff byte", "bad \xff byte"},
		{"한국어 — 설명 → 결과 ✅", "한국어 — 설명 → 결과 ✅"},
	}
	for _, tt := range tests {
		if got := NormalizeText(tt.in); got != tt.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := ID("use make"), "8ed6945e"; !strings.HasPrefix(got, want) && len(got) != 16 {
		t.Errorf("ID = %q", got)
	}
}

func TestIDIsSHA256Prefix(t *testing.T) {
	// sha256("abc") = ba7816bf8f01cfea414140de5dae2223...
	if got := ID("abc"); got != "ba7816bf8f01cfea" {
		t.Errorf("ID(abc) = %s", got)
	}
}

func TestIsNormalized(t *testing.T) {
	plain := []string{
		"",
		"x",
		"use make build",
		"[feedback_x.md](feedback_x.md) — 모든 콘텐츠 작성에서 출처 텍스트 외 발명 절대 금지 → 삭제 ✅ 🚨",
		"a <b> c", // '<' without a comment
		strings.Repeat("word ", 40) + "end",
		"ctrl \x01 byte",
		"\xe0\xa4\x95 devanagari, \xe3\x81\x82 hiragana",
	}
	for _, s := range plain {
		if !isNormalized([]byte(s)) {
			t.Errorf("isNormalized(%q) = false, want true", s)
		}
	}
	changed := []string{
		" lead", "trail ", "two  spaces", "1234567  9", "1234567 \x20 x", "12345678 ",
		"tab\there", "new\nline", "cr\rx",
		"x <!-- intermem:1 -->", "x <!-- other -->",
		"nb\u00a0sp", "ideo\u3000sp", "em\u2003sp", "nel\u0085x", "\u2028x",
	}
	for _, s := range changed {
		if isNormalized([]byte(s)) {
			t.Errorf("isNormalized(%q) = true, but it normalizes to %q", s, NormalizeText(s))
		}
	}
	// Double spaces at every offset, across the 8-byte word boundaries.
	for i := 1; i < 20; i++ {
		s := strings.Repeat("a", i) + "  " + strings.Repeat("b", 20-i)
		if isNormalized([]byte(s)) {
			t.Errorf("double space at %d not detected", i)
		}
	}
}
