// Command intermem-hook is the hook front: Claude Code runs it for every
// intermem hook event. It answers a quiet Stop and a SessionStart whose
// cached context holds itself, and hands everything else to
// intermem-snapshot or intermem-inject (package hookfront). It always
// exits 0.
//
// It runs for a few milliseconds, so the runtime's periodic update of
// GOMAXPROCS (a goroutine, re-reading the cgroup's limits) is off.
//
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/hookfront"
)

func main() {
	// clienv.FromOS without the working directory, which the front asks for
	// only when the payload names none (hookfront.Main).
	env := clienv.New(os.Environ(), "", os.Stdin, os.Stdout, os.Stderr)
	os.Exit(hookfront.Main(env, os.Args[1:], hookfront.Options{Exec: hookfront.HandOver}))
}
