package sources

import (
	"slices"
	"testing"

	"github.com/intermem/intermem/pkg/source"
)

func TestRegistry(t *testing.T) {
	r := Registry()
	if got, want := r.Names(), []string{"auto-memory", "clavain", "compound", "continuity", "instructions", "interfluence", "promoted", "written"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	var _ source.Whole = r.All()[0].(source.Whole)
	var _ source.Locator = r.All()[4].(source.Locator)
	var _ source.Appender = r.All()[5].(source.Appender)
	// The written log is parsed whole: a retire line takes back an earlier
	// record (package written).
	if _, ok := r.All()[7].(source.Appender); ok {
		t.Error("the written source resumes its log, which would keep memories a retire line took out")
	}
}
