// Package keyscan finds every occurrence of a set of keywords in one pass:
// an Aho–Corasick automaton over ASCII-case-folded bytes, compiled to a
// dense DFA over byte equivalence classes. Package redact uses it to run a
// rule's regular expression only where one of the rule's anchors occurs,
// and package screen the same way for its rule keys; with dozens of rules
// that is the difference between one pass over the text and dozens.
package keyscan

// Matcher is a compiled keyword set. One pass over the input reports every
// occurrence of every keyword. It is safe for concurrent use.
type Matcher struct {
	class  [256]uint8 // byte -> equivalence class; 0 is "byte in no anchor"
	nclass int32
	// delta[row+class] is the row of the next state, where a state's row is its number
	// times nclass. States are numbered so that those where an anchor ends come last:
	// a row >= outRow means "report out[row/nclass-firstOut]".
	delta    []int32
	outRow   int32
	firstOut int32
	out      [][]int32 // ids of the anchors that end in each reporting state
}

func foldByte(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// New compiles keywords (matched ASCII-case-insensitively). Keyword i is
// reported as id i.
func New(anchors []string) *Matcher {
	m := &Matcher{}
	next := 1
	for _, a := range anchors {
		for i := 0; i < len(a); i++ {
			b := foldByte(a[i])
			if m.class[b] == 0 {
				if next > 255 {
					panic("keyscan: too many distinct keyword bytes")
				}
				m.class[b] = uint8(next)
				next++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+('a'-'A')]
	}
	m.nclass = int32(next)
	nc := m.nclass

	// Trie.
	trie := []int32{} // state*nc+class -> child or -1
	newState := func() int32 {
		for i := int32(0); i < nc; i++ {
			trie = append(trie, -1)
		}
		m.out = append(m.out, nil)
		return int32(len(m.out) - 1)
	}
	newState()
	for id, a := range anchors {
		s := int32(0)
		for i := 0; i < len(a); i++ {
			c := int32(m.class[foldByte(a[i])])
			if trie[s*nc+c] < 0 {
				child := newState()
				trie[s*nc+c] = child
			}
			s = trie[s*nc+c]
		}
		m.out[s] = append(m.out[s], int32(id))
	}

	// Breadth-first failure links, folded into a complete transition table.
	n := int32(len(m.out))
	m.delta = make([]int32, n*nc)
	fail := make([]int32, n)
	queue := make([]int32, 0, n)
	for c := int32(0); c < nc; c++ {
		if ch := trie[c]; ch >= 0 {
			m.delta[c] = ch
			fail[ch] = 0
			queue = append(queue, ch)
		} else {
			m.delta[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(m.out[s], m.out[fail[s]]...)
		for c := int32(0); c < nc; c++ {
			if ch := trie[s*nc+c]; ch >= 0 {
				m.delta[s*nc+c] = ch
				fail[ch] = m.delta[fail[s]*nc+c]
				queue = append(queue, ch)
			} else {
				m.delta[s*nc+c] = m.delta[fail[s]*nc+c]
			}
		}
	}

	// Renumber: silent states first (the start state stays 0), reporting states last; store
	// rows instead of state numbers.
	perm := make([]int32, n)
	k := int32(0)
	for st := int32(0); st < n; st++ {
		if len(m.out[st]) == 0 {
			perm[st] = k
			k++
		}
	}
	m.firstOut = k
	var outs [][]int32
	for st := int32(0); st < n; st++ {
		if len(m.out[st]) != 0 {
			perm[st] = k
			k++
			outs = append(outs, m.out[st])
		}
	}
	delta := make([]int32, n*nc)
	for st := int32(0); st < n; st++ {
		for c := int32(0); c < nc; c++ {
			delta[perm[st]*nc+c] = perm[m.delta[st*nc+c]] * nc
		}
	}
	m.delta, m.out, m.outRow = delta, outs, m.firstOut*nc
	return m
}

// scan calls f(anchorID, end) for every anchor occurrence, end being the byte offset just
// past it, in increasing order of end.
// Scan calls f for every occurrence of every keyword in s, with the
// keyword's id and the offset just past the occurrence, in order of end.
func (m *Matcher) Scan(s string, f func(id int32, end int)) {
	row := int32(0)
	delta := m.delta
	class := &m.class
	outRow := m.outRow
	for i := 0; i < len(s); i++ {
		row = delta[row+int32(class[s[i]])]
		if row >= outRow {
			for _, id := range m.out[row/m.nclass-m.firstOut] {
				f(id, i+1)
			}
		}
	}
}
