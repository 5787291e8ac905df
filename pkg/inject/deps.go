package inject

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/rendercache"
)

// Deps records every filesystem fact Gather relied on (rendercache.Deps).
type Deps = rendercache.Deps

// NewDeps returns an empty recorder.
func NewDeps() *Deps { return rendercache.NewDeps() }

// RenderCacheName is the render cache file inside .intermem.
const RenderCacheName = rendercache.Name

// renderKey identifies everything besides the filesystem and the session
// a rendering depends on (rendercache.Key).
func renderKey(e Env) rendercache.Key {
	return rendercache.Key{Exe: exeID(), Root: e.Root, MemoryDir: e.MemoryDir, Cwd: e.Cwd, ConfigDir: e.ConfigDir, Home: e.Home,
		Resume: e.Resume, Identity: e.Identity, Budget: e.Budget, Threshold: e.Threshold}
}

// saveRender writes the render cache atomically (atomicfile, in the state
// directory that holds it; not fsynced: a cache lost in a crash costs
// nothing).
func saveRender(path string, key rendercache.Key, until time.Time, rule SessionRule, d *Deps, text string) error {
	b := rendercache.Encode(key, until, rule, d, text)
	if b == nil {
		return nil
	}
	if err := atomicfile.WriteState(filepath.Dir(path), path, b, atomicfile.Options{NoSync: true}); err != nil {
		return fmt.Errorf("render cache: %w", err)
	}
	return nil
}

// recencyBounds are the ages at which a cited file's relevance changes
// tier (see recencyPoints and ago).
var recencyBounds = []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// renderValidUntil is the earliest time any cited file crosses a recency
// tier, or a sweep falls due, so a cached rendering is never served past a
// change in what it says.
func renderValidUntil(in *Inputs, now time.Time) time.Time {
	var until time.Time
	// The sweep suggestion appears once the last sweep is SweepEvery old.
	if due, since := in.SweepDue(); !due && !since.IsZero() {
		until = since.Add(SweepEvery).Add(time.Nanosecond)
	}
	tier := func(c Cited) {
		if !c.Exists {
			return
		}
		age := now.Sub(c.ModTime)
		for _, b := range recencyBounds {
			if age <= b {
				t := c.ModTime.Add(b).Add(time.Nanosecond)
				if until.IsZero() || t.Before(until) {
					until = t
				}
				break
			}
		}
	}
	for i := range in.Candidates {
		for _, c := range in.Candidates[i].Cites {
			tier(c)
		}
	}
	for i := range in.Related {
		for _, c := range in.Related[i].Cites {
			tier(c)
		}
	}
	for i := range in.Corrections {
		tier(in.Corrections[i].State)
	}
	return until
}
