package mdoc

import "testing"

func TestAllStatementsIncludesManagedBlocks(t *testing.T) {
	d := Parse([]byte("# T\n\n- outside\n\n<!-- OPENSPEC:START -->\n- inside the block\n<!-- OPENSPEC:END -->\n"))
	var plain, all []string
	for _, s := range d.Statements() {
		plain = append(plain, s.Text)
	}
	for _, s := range d.AllStatements() {
		all = append(all, s.Text)
	}
	if len(plain) != 1 || plain[0] != "outside" {
		t.Errorf("Statements = %q, want only the text outside the block", plain)
	}
	found := false
	for _, s := range all {
		if s == "inside the block" {
			found = true
		}
	}
	if !found {
		t.Errorf("AllStatements = %q, want the text inside the block too", all)
	}
}
