package sourcetest

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// Fixture is one file of a txtar fixture archive.
type Fixture struct {
	Name string
	Data []byte
}

// Fixtures reads the files of a txtar archive. A txtar file always ends in a
// newline; tests that need other endings build their bytes in code.
func Fixtures(t testing.TB, file string) []Fixture {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []Fixture
	for _, f := range txtar.Parse(data).Files {
		out = append(out, Fixture{Name: f.Name, Data: f.Data})
	}
	return out
}
