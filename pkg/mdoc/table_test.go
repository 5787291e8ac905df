package mdoc

import (
	"strings"
	"testing"
)

// gfmTables returns the header rows of the tables GitHub would render in
// doc: a row followed by a delimiter row of as many cells (GFM 0.29 §4.10).
// It is written apart from the code under test, and simply: a cell
// boundary is an unescaped pipe, an outer pipe at either end is none.
func gfmTables(doc string) []string {
	cells := func(row string) int {
		row = strings.TrimSpace(row)
		row = strings.TrimPrefix(row, "|")
		if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
			row = strings.TrimSuffix(row, "|")
		}
		return strings.Count(row, "|") - strings.Count(row, `\|`) + 1
	}
	delimiter := func(row string) bool {
		row = strings.TrimSpace(row)
		if !strings.Contains(row, "|") || strings.Trim(row, "|:- ") != "" || !strings.Contains(row, "-") {
			return false
		}
		return true
	}
	var headers []string
	lines := strings.Split(doc, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.Contains(lines[i], "|") && delimiter(lines[i+1]) && cells(lines[i]) == cells(lines[i+1]) {
			headers = append(headers, lines[i])
		}
	}
	return headers
}

// TestPlaceTableRendersOnGitHub: a promoted table keeps rendering as a
// table. Its marker goes on a line of its own before the header row (an
// HTML comment that GFM ends at its line), never at the end of the header
// row, where it is one more cell than the delimiter row has and GitHub
// renders the table as a paragraph of pipes. A table after a lead-in line
// keeps the marker on the lead-in. (cmark-gfm -e table renders both
// outputs below as tables.)
func TestPlaceTableRendersOnGitHub(t *testing.T) {
	for _, tc := range []struct {
		name, doc, block, want, header string
	}{{
		name:   "table",
		doc:    "# Project\n\n## Ports\n\n- Ask before changing one.\n",
		block:  "| service | port |\n|---|---|\n| api | 8080 |\n| web | 3000 |",
		want:   "# Project\n\n## Ports\n\n- Ask before changing one.\n\n" + mk + "\n| service | port |\n|---|---|\n| api | 8080 |\n| web | 3000 |\n",
		header: "| service | port |",
	}, {
		name:   "aligned, no outer pipes, an escaped pipe",
		doc:    "## Ports\n",
		block:  "service | flag\n:--|--:\napi | `a\\|b`",
		want:   "## Ports\n\n" + mk + "\nservice | flag\n:--|--:\napi | `a\\|b`\n",
		header: "service | flag",
	}, {
		name:   "lead-in",
		doc:    "## Ports\n",
		block:  "The ports in use:\n\n| service | port |\n|---|---|\n| api | 8080 |",
		want:   "## Ports\n\n- The ports in use: " + mk + "\n\n  | service | port |\n  |---|---|\n  | api | 8080 |\n",
		header: "  | service | port |",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ins := checkPlace(t, tc.doc, "Ports", tc.block)
			if got := string(ins.Content); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if h := gfmTables(string(ins.Content)); len(h) != 1 || h[0] != tc.header {
				t.Errorf("GitHub would render the tables %q, want one headed %q:\n%s", h, tc.header, ins.Content)
			}
		})
	}
}
