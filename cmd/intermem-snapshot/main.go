// Command intermem-snapshot is the Stop and SessionEnd hook: it records
// which auto-memory entries exist in the current Claude Code session. It
// reads the hook payload on stdin, prints nothing, and always exits 0.
package main

import (
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/snapshot"
)

func main() {
	os.Exit(snapshot.Main(cli.FromOS(), os.Args[1:]))
}
