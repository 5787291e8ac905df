// Command intermem-hook is the hook front: Claude Code runs it for every
// intermem hook event. It answers a quiet Stop and a SessionStart whose
// cached context holds itself, and hands everything else to
// intermem-snapshot or intermem-inject (package hookfront). It always
// exits 0.
package main

import (
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/hookfront"
)

func main() {
	os.Exit(hookfront.Main(cli.FromOS(), os.Args[1:], hookfront.Options{Exec: hookfront.HandOver}))
}
