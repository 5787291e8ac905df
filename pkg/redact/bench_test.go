package redact

import (
	"fmt"
	"strings"
	"testing"
)

// memoryLike builds a MEMORY.md-like text of n lines: headings, pointer bullets, fact
// bullets with paths, commands, dates and SHAs, and one labelled secret every 50 lines.
func memoryLike(n int) string {
	var b strings.Builder
	b.WriteString("# Project memory\n\n")
	for i := 0; b.Len() >= 0 && i < n; i++ {
		switch {
		case i%25 == 0:
			fmt.Fprintf(&b, "## Section %d\n", i/25)
		case i%50 == 7:
			fmt.Fprintf(&b, "- Push token: ghp_%s (rotated 2026-05-%02d)\n", fake(fmt.Sprint(i), alnumA, 36), i%28+1)
		case i%50 == 31:
			fmt.Fprintf(&b, "- DB_PASSWORD=%s in .env.local; the API key lives in keychain\n", fake(fmt.Sprint(i), alnumA, 14))
		case i%5 == 1:
			fmt.Fprintf(&b, "- [Feedback %d](feedback_topic_%d.md) — always run `go test ./...` before committing; see commit 0223a0c%d\n", i, i, i)
		case i%5 == 2:
			fmt.Fprintf(&b, "- `scripts/deploy.sh` needs `--region us-east-1`; session bd976eeb-1b2c-4d5e-8f90-a1b2c3d4e5f6, max_tokens 4096 <!-- intermem:0123456789abcd%02x -->\n", i%256)
		case i%5 == 3:
			fmt.Fprintf(&b, "- Fixed the token refresh bug in `pkg/auth/session.go:%d` (key insight: clock skew), see https://github.com/acme/api/pull/%d\n", i, i)
		default:
			fmt.Fprintf(&b, "- 배포 전에 `make lint` 실행; 비밀번호 관리는 1Password 사용 — 详细设计见 docs/design-%d.md\n", i)
		}
	}
	return b.String()
}

func BenchmarkFind200Lines(b *testing.B) {
	s := memoryLike(200)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Find(s)
	}
}

func BenchmarkString200Lines(b *testing.B) {
	s := memoryLike(200)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

func BenchmarkString200LinesClean(b *testing.B) {
	s := String(memoryLike(200))
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

func BenchmarkString1MB(b *testing.B) {
	s := memoryLike(200)
	s = strings.Repeat(s, (1<<20)/len(s)+1)[:1<<20]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

// BenchmarkFind1MBOneLine is the adversarial shape: one 1 MB line full of anchors.
func BenchmarkFind1MBOneLine(b *testing.B) {
	s := strings.ReplaceAll(memoryLike(200), "\n", " ")
	s = strings.Repeat(s, (1<<20)/len(s)+1)[:1<<20]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Find(s)
	}
}
