package retrieve

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/intermem/intermem/pkg/catalog"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/score"
	"github.com/intermem/intermem/pkg/source"
)

// StatusMissing is the status of an entry nothing has validated yet
// that cites a project path missing on disk (plan.Known: a path under a
// top-level directory that exists). The read tools write nothing, so they
// cannot validate; they say what is known without git, by the rule the
// SessionStart hook and status judge such an entry by, instead of "not
// validated yet" beside a session start that already marks it stale.
const StatusMissing = "missing"

// StatusObservation is the status of an edit observation (an interfluence
// block: source.Observation): not a claim, so nothing validates it and it
// is never "not validated yet"; the file it names is the file edited, not
// a citation.
const StatusObservation = "observation"

// known gives the overlay o of the unvalidated entry e what is known
// without validating: StatusObservation for an edit observation; on
// disk, StatusMissing, with the confidence plan.Known gives it, when a
// project path it cites is missing. Its citations are those its text
// cites (plan.CitePaths, as the hook derives them) and those its source
// lists.
func (v *View) known(o *catalog.Overlay, e *source.Entry) {
	if o.Known || o.Status != catalog.StatusUnvalidated {
		return
	}
	if e.Kind == source.Observation {
		o.Status = StatusObservation
		return
	}
	if v.Project == nil {
		return
	}
	cites := plan.CitePaths(e.Title + "\n" + e.Text)
	for _, c := range e.Citations {
		if p, _, _ := strings.Cut(c, ":"); p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "..") {
			cites = append(cites, p)
		}
	}
	root := v.Project.Root
	exists := func(p string) (bool, bool) {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil, true
	}
	if plan.Missing(cites, exists) != "" {
		o.Status, o.Confidence = StatusMissing, score.Base-score.BrokenEach
	}
}
