// Command intermem-synthesize plans and applies the promotion of stable
// auto-memory into CLAUDE.md and AGENTS.md. The /intermem:synthesize skill
// runs it; people can too. Run "intermem-synthesize --help".
package main

import (
	"context"
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
)

func main() {
	os.Exit(command.SynthesizeMain(context.Background(), cli.FromOS(), os.Args[1:]))
}
