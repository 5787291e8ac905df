package command

import "github.com/intermem/intermem/pkg/redact"

// redactText scrubs secrets from anything a command prints.
func redactText(s string) string { return redact.String(s) }
