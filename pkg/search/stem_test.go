package search

import "testing"

// The expected stems are from the published Porter2 sample vocabulary and
// the algorithm's own examples, copied by hand.
func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"consign": "consign", "consigned": "consign", "consigning": "consign",
		"consignment": "consign", "consist": "consist", "consisted": "consist",
		"consistency": "consist", "consistent": "consist", "consistently": "consist",
		"consisting": "consist", "consists": "consist", "consolation": "consol",
		"consolations": "consol", "consolatory": "consolatori", "console": "consol",
		"consoled": "consol", "consoles": "consol", "consolidate": "consolid",
		"consolidated": "consolid", "consolidating": "consolid", "consoling": "consol",
		"consolingly": "consol", "consols": "consol", "consonant": "conson",
		"consort": "consort", "consorted": "consort", "consorting": "consort",
		"conspicuous": "conspicu", "conspicuously": "conspicu", "conspiracy": "conspiraci",
		"conspirator": "conspir", "conspirators": "conspir", "conspire": "conspir",
		"conspired": "conspir", "conspiring": "conspir", "constable": "constabl",
		"constables": "constabl", "constance": "constanc", "constancy": "constanc",
		"constant": "constant",
		"knack":    "knack", "knackeries": "knackeri", "knacks": "knack", "knag": "knag",
		"knave": "knave", "knaves": "knave", "knavish": "knavish", "kneaded": "knead",
		"kneading": "knead", "knee": "knee", "kneel": "kneel", "kneeled": "kneel",
		"kneeling": "kneel", "kneels": "kneel", "knees": "knee", "knell": "knell",
		"knelt": "knelt", "knew": "knew", "knick": "knick", "knif": "knif",
		"knife": "knife", "knight": "knight", "knightly": "knight", "knights": "knight",
		"knit": "knit", "knits": "knit", "knitted": "knit", "knitting": "knit",
		"knives": "knive", "knob": "knob", "knobs": "knob", "knock": "knock",
		"knocked": "knock", "knocker": "knocker", "knockers": "knocker",
		"knocking": "knock", "knocks": "knock", "knopp": "knopp", "knot": "knot",
		"knots": "knot",
		// Step examples from the algorithm's description.
		"caresses": "caress", "ponies": "poni", "ties": "tie", "cries": "cri",
		"gas": "gas", "gaps": "gap", "kiwis": "kiwi", "this": "this",
		"luxuriated": "luxuri", "hopping": "hop", "hoped": "hope",
		"generously": "generous", "generate": "generat", "communism": "communism",
		"cry": "cri", "by": "by", "say": "say", "skies": "sky", "dying": "die",
		"succeeding": "succeed", "exceed": "exceed", "news": "news",
		"youth": "youth", "yelling": "yell", "'quoted'": "quot",
		// Not stemmed: digits, non-ASCII, short words.
		"es419": "es419", "café": "café", "go": "go",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}
