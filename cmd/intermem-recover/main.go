// Command intermem-recover lists, resumes or discards intermem operations
// that a crash interrupted. Run "intermem-recover --help".
package main

import (
	"context"
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/command"
)

func main() {
	os.Exit(command.RecoverMain(context.Background(), cli.FromOS(), os.Args[1:]))
}
