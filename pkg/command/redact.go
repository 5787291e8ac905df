package command

import (
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/screen"
)

// redactText scrubs secrets from anything a command prints.
func redactText(s string) string { return redact.String(s) }

// screenText lists why text could be a prompt injection if it became a
// committed instruction.
func screenText(s string) []string {
	var out []string
	for _, f := range screen.Check(s) {
		out = append(out, f.Detail)
	}
	return out
}
