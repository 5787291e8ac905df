// Package e2e runs intermem inside the real Claude Code, offline.
//
// Each test starts the pinned Claude Code (scripts/claude-code.sh) as a
// child process with a throwaway HOME, pointed at a loopback fake Messages
// API (package fakeapi) that records every request body, and loads the
// plugin from this repository (--plugin-dir, or a marketplace install).
// Assertions are made on what Claude Code sent to the model, on its debug
// log and hook lifecycle events, and on intermem's store in the project.
//
// The suite must never reach the network, so it only runs inside a
// loopback-only network namespace. scripts/e2e.sh builds the binaries,
// installs Claude Code, compiles the test binary and runs it under
// `unshare -n`. `go test ./e2e` does the same by re-executing the test
// binary in a fresh namespace when INTERMEM_E2E=1 or CI is set; otherwise
// it skips with a message saying how to run it. When the suite is asked for
// (CI or INTERMEM_E2E=1) and cannot run — not root, no unshare, Claude Code
// cannot be installed — it fails; it never skips.
//
// Every piece the suite exercises (the hook binaries, the CLI, the skill)
// must be present: a missing piece fails the test that needs it.
//
// Environment:
//
//	INTERMEM_E2E=1           run (and fail loudly if impossible) outside CI
//	INTERMEM_E2E=0           skip even in CI (scripts/e2e.sh runs it instead)
//	INTERMEM_CLAUDE=path     the claude binary to test (default: scripts/claude-code.sh)
//	INTERMEM_CLAUDE_VERSION  the version scripts/claude-code.sh installs
//	INTERMEM_E2E_KEEP=1      keep each test's HOME, projects and logs, and print where
package e2e
