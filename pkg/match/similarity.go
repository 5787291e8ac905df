package match

import (
	"github.com/adrg/strutil"
	"github.com/adrg/strutil/metrics"
)

// oracleMetric is the oracle metric. Its Compare keeps no state, so one value is
// safe for concurrent use.
var oracleMetric = &metrics.SorensenDice{CaseSensitive: true, NgramSize: 2}

// Similarity is the fuzzy metric: the Sørensen–Dice coefficient over the
// character bigrams of Normalize(a) and Normalize(b), computed by strutil.
// Normalize already lower-cases, so the comparison is case-sensitive on the
// normalized forms. strutil's definition, which Index reproduces exactly:
//
//   - bigrams are pairs of adjacent runes, so a string of n runes has
//     max(n-1, 0) of them;
//   - common is the multiset intersection: Σ over bigrams of min(count in a,
//     count in b);
//   - two empty strings score 1; otherwise, if neither has a bigram (both
//     shorter than 2 runes) the score is 0; otherwise it is
//     2*float64(common)/float64(bigrams(a)+bigrams(b)).
//
// Similarity is the oracle the fast path in Index is tested against; it
// costs microseconds a pair, so never call it in a loop over a document.
func Similarity(a, b string) float64 {
	return strutil.Similarity(Normalize(a), Normalize(b), oracleMetric)
}
