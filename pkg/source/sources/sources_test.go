package sources

import (
	"slices"
	"testing"

	"github.com/intermem/intermem/pkg/source"
)

func TestRegistry(t *testing.T) {
	r := Registry()
	if got, want := r.Names(), []string{"clavain", "compound", "interfluence"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	var _ source.Appender = r.All()[2].(source.Appender)
}
