// Command intermem-mcp is intermem's MCP server: Claude Code starts it for
// each session and the model calls its tools to search, read, re-validate
// and trace the project's memories. It speaks JSON-RPC on stdin and
// stdout until the client closes stdin. Run "intermem-mcp --help".
package main

import (
	"context"
	"os"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/mcpserver"
)

func main() {
	os.Exit(mcpserver.Main(context.Background(), cli.FromOS(), os.Args[1:]))
}
