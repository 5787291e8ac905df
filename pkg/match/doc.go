// Package match decides whether a candidate fact is already said by the
// target documents: exact duplicates (after normalization) are skipped,
// near-identical wording (Index.Best) is shown to the user as "[similar to
// existing: …]", and, at the level of single statements and words (Notes),
// a paraphrase, a candidate that refines an existing statement or one that
// is narrower than it is called out. Notes has its own documentation; what
// follows is about Index.
//
// # Normalization
//
// Normalize maps text to its dedup form: HTML comments removed (our own
// <!-- intermem:… --> markers included — the original tool compared text
// with its own markers in it and promoted facts twice), leading list
// markers, numbering, heading #s and > quotes removed on every line,
// emphasis and code punctuation (*, _, `, ~~) removed but the words kept,
// [text](url) turned into "text url", Unicode lower-case, whitespace
// collapsed, trailing . ; : trimmed. It is deterministic, linear, total on
// invalid UTF-8 (each bad byte becomes U+FFFD) and idempotent. Key hashes
// the normalized form (64-bit FNV-1a) for exact dedup.
//
// # Metric
//
// Similarity is the Sørensen–Dice coefficient over rune bigrams of the
// normalized strings, computed by github.com/adrg/strutil:
//
//	dice(Q, E) = 2·c / (a + b),  c = |Q ∩ E|
//
// where Q and E are the bigram multisets, a = |Q| and b = |E| (runes − 1),
// and ∩ takes the minimum count of each bigram. Two empty strings score 1;
// two strings without bigrams otherwise score 0. Similarity is the oracle.
//
// # Index
//
// Scoring every candidate against every line is what made the original tool
// take 15.9 s for 135 entries against an 802-line AGENTS.md; at 1,000
// candidates × 10,000 lines strutil would need minutes. Index keeps, per
// statement, its bigram ids (dense ids, ASCII pairs without hashing) with
// their counts and a 1,024-bit signature, and, built on the first query,
// an inverted index: per bigram, the statements holding it, ordered by
// length. Bigrams are ranked globally, rarest first. Best(q, m) then reads
// only what can reach m:
//
//   - Threshold. A statement of b bigrams qualifies iff c ≥ need(b), the
//     least c with 2·c/(a+b) ≥ m, computed with that float expression
//     itself; since c ≤ min(a, b), b must lie in [a·m/(2−m), a·(2−m)/m].
//   - Prefix filter, per length. Take Q's bigrams rarest first (bigrams no
//     statement has first, for free). A statement sharing none of the
//     first a − need(b) + 1 occurrences shares at most need(b) − 1, so each
//     query bigram's postings are read only for the lengths b whose prefix
//     it is in: a short run of each length-ordered list. Rare bigrams are
//     read for all lengths, common ones for short statements or not at all.
//   - Positional filter. When a statement is met under query bigram g,
//     every rarer query bigram has been read for its length, so its acc
//     (query occurrences of the bigrams it was met under) bounds what it
//     shares through them, and its own occurrences
//     ranked before g are matched (in acc) or absent from Q: it shares at
//     most acc + min(Q's occurrences from g on, b − its position of g).
//     Below need(b) it is dropped on the spot.
//   - Count bound. After reading, a statement shares at most acc plus the
//     query occurrences not read for its length.
//   - Signature bound. At most popcount(sigQ ∧ sigE) plus the query's (or
//     the statement's) occurrences beyond its set bits — sixteen AND+POPCNT.
//   - The survivors get their exact multiset intersection and the score
//     2·float64(c)/float64(a+b) — the expression strutil evaluates, so the
//     same bits — and the best (highest score, then lowest id, then first
//     added) wins; once one is found, bounds below its score prune too.
//
// Every bound is an upper bound on c compared with need(b) or, as a score,
// through IEEE division, which is monotone; the length and prefix limits
// are widened by one for rounding. So no statement whose exact score is
// ≥ m is ever pruned.
//
// # Invariant
//
// For every index, query and threshold, Best returns exactly what scanning
// every statement with Similarity returns: the same statement and the same
// score, bit for bit. The tests check it against the all-pairs oracle on
// random and real-world text, and FuzzBest keeps checking.
package match
