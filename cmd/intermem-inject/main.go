// Command intermem-inject is the SessionStart hook: it prints one JSON
// object whose additionalContext is a token-budgeted index of the
// project's memory and the memories that matter now, never repeating what
// Claude Code already loaded. It reads the hook payload on stdin, prints
// nothing when there is nothing worth saying, and always exits 0.
package main

import (
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/inject"
)

func main() {
	os.Exit(inject.Main(cli.FromOS(), os.Args[1:]))
}
