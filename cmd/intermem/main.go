// Command intermem is the command-line tool for people and skills:
// status, and (as they land) search, topics, validate, sweep, archived,
// restore, tier and context. Run "intermem help".
package main

import (
	"context"
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
)

func main() {
	os.Exit(command.Main(context.Background(), cli.FromOS(), os.Args[1:]))
}
