// Package config reads .intermem/config.json, the project's one
// configuration file, in one place:
//
//	{
//	  "layout": "flat" | "tiered",      // where promoted facts go (package tier)
//	  "tier_claude": true,              // tier CLAUDE.md as well
//	  "sources": {"interfluence": false}, // sources switched off (package catalog)
//	  "mode": "meta",                   // record nothing (package continuity)
//	  "project": "…"                    // one line: what the project is (package inject)
//	}
//
// Every key is optional; a missing file is the defaults. The file is
// opened without following a link (the state directory is intermem's own)
// and read only when it is a regular file of at most MaxBytes. A file that
// is not JSON of this shape — a key not among these too (UnknownKeyError:
// a misspelt key would otherwise change nothing, silently) — is ErrInvalid,
// which the caller reports: the commands refuse to run, the hooks log it
// and the SessionStart context says it is ignored. The environment's
// overrides (INTERMEM_LAYOUT, …) are the callers' business.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/intermem/intermem/pkg/statefile"
)

// Name is the file's name in the state directory.
const Name = "config.json"

// MaxBytes bounds the file.
const MaxBytes = 64 << 10

// File is the content of .intermem/config.json.
type File struct {
	// Layout is "flat" or "tiered"; "" leaves the default.
	Layout string `json:"layout,omitempty"`
	// TierClaude tiers CLAUDE.md as well as AGENTS.md.
	TierClaude bool `json:"tier_claude,omitempty"`
	// Sources maps a source's name to false to switch it off; a source not
	// named is on.
	Sources map[string]bool `json:"sources,omitempty"`
	// Mode "meta" makes intermem record nothing for the project's sessions
	// (package continuity); INTERMEM_MODE overrides it.
	Mode string `json:"mode,omitempty"`
	// Project is one line saying what the project is: the first line of
	// the SessionStart bootstrap (package inject), which otherwise takes
	// the first paragraph of README.md.
	Project string `json:"project,omitempty"`
}

// ErrInvalid is returned for a config file that cannot be used: not a
// regular file, too large, or not JSON of File's shape.
var ErrInvalid = errors.New("unusable configuration")

// Read reads the config file of the state directory stateDir. A missing
// file (or state directory) is the zero File and no error. The file is
// read on its descriptor (package statefile), not through an os.File,
// whose first use in a process starts the runtime's network poller: the
// hook front reads it at every quiet turn.
func Read(stateDir string) (File, error) {
	var c File
	path := filepath.Join(stateDir, Name)
	b, err := statefile.Read(path, MaxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case errors.Is(err, statefile.ErrNotRegular):
		return c, fmt.Errorf("%w: %s is not a regular file", ErrInvalid, path)
	case errors.Is(err, statefile.ErrTooLarge):
		return c, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, path, MaxBytes)
	case err != nil:
		return c, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c, err = decode(b)
	if err != nil {
		return File{}, fmt.Errorf("%w: %s: %w", ErrInvalid, path, err)
	}
	return c, nil
}

// AutoMemory is the auto-memory source's name (package
// source/automemory's Name): the hooks that decide whether to look at the
// memory at all — the hook front among them — ask On with it without
// linking the source.
const AutoMemory = "auto-memory"

// On reports whether the file leaves the source name on: a source that
// "sources" does not name is on, one it maps to false (or null) is off.
func (c File) On(name string) bool {
	on, set := c.Sources[name]
	return on || !set
}

// MemoryOff reports whether stateDir's file switches the auto-memory
// source off. An unusable file switches nothing off (the commands report
// it; a session start reads it the same way): false. Failing closed
// instead — an unusable file read as "everything off" — would stop
// intermem recording a project's memory at a typo, silently to whoever
// does not read the log; left on, nothing is lost while the file is
// fixed, and what it meant to switch off is switched off then.
func MemoryOff(stateDir string) bool {
	c, err := Read(stateDir)
	return err == nil && !c.On(AutoMemory)
}

// Mode is the mode configured in stateDir's file; "" when the file is
// missing or cannot be used.
func Mode(stateDir string) string {
	c, err := Read(stateDir)
	if err != nil {
		return ""
	}
	return c.Mode
}
