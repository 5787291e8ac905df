package command

import (
	"strings"
	"testing"

	"github.com/intermem/intermem/pkg/continuity"
)

// At a terminal, a backtrack asks until the answer is a choice; the end of
// input aborts.
func TestAskBacktrack(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want continuity.Choice
	}{
		{"continue\n", continuity.Continue},
		{"maybe\nF\n", continuity.Forget},
		{"\n a \n", continuity.Abort},
		{"", continuity.Abort},
	} {
		var out strings.Builder
		got := askBacktrack(strings.NewReader(tc.in), &out, 1, 3, []int{2, 3})
		if got != tc.want {
			t.Errorf("answers %q: %q, want %q", tc.in, got, tc.want)
		}
		if !strings.HasPrefix(out.String(), "Starting phase 1 goes back from phase 3, and phases 2, 3 hold records.\n") {
			t.Errorf("prompt:\n%s", out.String())
		}
	}
}
