package inject

import (
	"crypto/sha256"
	"encoding/binary"
	hexbytes "encoding/hex"
	"strings"

	"github.com/intermem/intermem/pkg/source/docrecord"
)

// Documents without a stored record
//
// A document the catalog holds no current record of (loaded.go: never
// stored — the store is written by commands and session ends, not by a
// session start —, changed since, racy) is derived from its bytes
// (docrecord.Derive), which for a long CLAUDE.md or AGENTS.md costs a
// session start more than the rest of its reading of documents. Until a
// session end or a command stores its record, every session start of the
// project would derive it again: a long session's compactions and clears,
// each with the memory changed since the last rendering. So the derivation
// is memoized like the index's other pure functions: by the document's
// bytes (their SHA-256 and length, docKey), the value docrecord.Encode of
// the record — the catalog's own stored form, which keeps no record whose
// import or index paths hold a secret (such a document is derived at every
// start, as before). The memo is a cache of Derive, never of a file: a
// document's bytes are read at every start that does not take the
// catalog's record, and the memo is used only for those very bytes.

// docKey identifies a document's bytes: the first 64 bits of their
// SHA-256 and their length. A document is a file of the project (or the
// user's), so the key is a cryptographic hash, not the FNV of the
// index's other memos: no one can write a document that takes another's
// record.
func docKey(b []byte) memoKey {
	sum := sha256.Sum256(b)
	return memoKey{binary.BigEndian.Uint64(sum[:8]), len(b)}
}

// docMemo is a memoized document record: hex of its docrecord.Encode,
// and the redaction memos (Index.Redact) its derivation used, which a run
// that takes the record from the memo keeps as used too: a document
// edited later is derived again mostly over the same texts, without the
// redaction engine.
type docMemo struct {
	rec    string
	redact []memoKey
}

// docRecord returns docrecord.DeriveWith(b, ix.Redact), from the memo
// when bytes b were derived before by this executable, and whether it
// derived them now.
func (ix *Index) docRecord(b []byte) (rec *docrecord.Record, derived bool) {
	k := docKey(b)
	if m, ok := ix.docs[k]; ok {
		if raw, err := hexbytes.DecodeString(m.rec); err == nil {
			if rec, err := docrecord.Decode(raw); err == nil {
				ix.docUsed[k] = true
				for _, r := range m.redact {
					if ix.fixed[r] {
						ix.fused[r] = true
					}
				}
				return rec, false
			}
		}
	}
	var red []memoKey
	rec = docrecord.DeriveWith(b, func(s string) string {
		r := ix.Redact(s)
		red = append(red, keyOf(r)) // the memo Redact keeps (its output is a fixed point)
		return r
	})
	enc := docrecord.Encode(rec)
	if _, err := docrecord.Decode(enc); err != nil {
		return rec, true // not kept: a path holds a secret
	}
	ix.docs[k], ix.docUsed[k], ix.dirty = &docMemo{rec: hexbytes.EncodeToString(enc), redact: red}, true, true
	return rec, true
}

// encodeKeys writes memo keys as one field: "hash.length" each, comma
// separated (decodeKeys reads it).
func encodeKeys(ks []memoKey) string {
	var b strings.Builder
	for i, k := range ks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(hex(k.h))
		b.WriteByte('.')
		b.WriteString(itoa(k.n))
	}
	return b.String()
}

// decodeKeys reads encodeKeys' field; false for anything else.
func decodeKeys(s string) ([]memoKey, bool) {
	if s == "" {
		return nil, true
	}
	var out []memoKey
	for f := range strings.SplitSeq(s, ",") {
		h, n, ok := strings.Cut(f, ".")
		if !ok || h == "" || n == "" {
			return nil, false
		}
		out = append(out, memoKey{unhex(h), atoi(n)})
	}
	return out, true
}
