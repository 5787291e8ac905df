// Package match decides whether a candidate fact is already said by the
// target documents: exact duplicates (after normalization) are skipped,
// fuzzy matches are shown to the user as "[similar to existing: …]", and a
// candidate that refines an existing line, or is narrower than one, is
// called out.
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
//	dice(A, B) = 2·|A ∩ B| / (|A| + |B|)
//
// where A and B are the bigram multisets (|A| = runes−1) and ∩ takes the
// minimum count of each bigram. Two empty strings score 1; two strings
// without bigrams otherwise score 0. Similarity is the oracle.
//
// # Index
//
// Scoring every candidate against every line is what made the original tool
// take 15.9 s for 135 entries against an 802-line AGENTS.md; at 1,000
// candidates × 10,000 lines strutil would need minutes. Index keeps, per
// statement, its sorted bigram ids (a multiset, ids dense, ASCII pairs
// without hashing) and, per bigram, the postings list of statements holding
// it. Best(q, m) with a = |Q| bigrams reads only what can reach m:
//
//   - Length filter. Since |Q ∩ B| ≤ min(a, b), dice ≥ m requires
//     b ∈ [a·m/(2−m), a·(2−m)/m]; other statements are skipped.
//   - Prefix filter. A statement that qualifies shares at least
//     t = ⌈m·(a+b_min)/2⌉ bigram occurrences with Q. Sort Q's distinct bigrams
//     rarest first (by postings length; bigrams no statement has first, for
//     free) and take the shortest prefix holding a−t+1 occurrences: a
//     statement sharing none of those shares at most t−1, so only the
//     prefix's postings — short lists — are read to find candidates.
//   - Count bound. While reading them, shared occurrences are accumulated
//     per candidate (min of the two counts); the rest of Q can add at most
//     r, so a candidate whose 2·(acc+min(r, b−acc))/(a+b) is below m, or
//     below the best score found so far, is dropped unscored.
//   - The survivors get their exact multiset intersection by merging two
//     sorted id lists, and the score 2·float64(c)/float64(a+b) — the same
//     expression strutil evaluates, so the same bits.
//
// Each bound is rounded outward by at least one unit, and IEEE division is
// monotone, so no statement whose exact score is ≥ m is ever pruned.
//
// # Invariant
//
// For every index, query and threshold, Best returns exactly what scanning
// every statement with Similarity returns: the same statement (highest
// score ≥ m; ties to the lowest id, then the first added) and the same
// score, bit for bit. Refinement likewise equals its documented rule applied
// to every statement. The tests check both against the all-pairs oracle on
// random and real-world text, and FuzzBest keeps checking.
package match
