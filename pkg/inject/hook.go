package inject

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/hookio"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/redact"
	"github.com/intermem/intermem/pkg/rendercache"
	"github.com/intermem/intermem/pkg/settings"
	"github.com/intermem/intermem/pkg/stability"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/userstate"
)

// storeWait bounds the wait for a busy store: a session start must not
// wait on a writer; the cached rendering stands in.
const storeWait = 50 * time.Millisecond

// BudgetVar names the environment variable holding the token budget.
const BudgetVar = settings.BudgetVar

// HookOptions are the hookio options for intermem-inject.
var HookOptions = hookio.Options{
	Name:     "intermem-inject",
	Timeout:  2 * time.Second,
	MayPrint: []string{"SessionStart"},
	Redact:   redact.String,
	Usage: `Usage: intermem-inject < payload.json

The SessionStart hook. Claude Code runs it at startup, resume, clear and
compact with the hook payload (one JSON object) on stdin; it prints one
JSON object whose additionalContext is a token-budgeted index of the
project's memory not already in the context (INTERMEM_TOKEN_BUDGET,
default 1200 tokens), or nothing, and always exits 0. Failures go to the
project's .intermem/log.

To see what it would inject for a project, run: intermem context
`,
}

// Main is the whole of cmd/intermem-inject.
func Main(env *cli.Env, args []string) int {
	return hookio.Run(env, args, HookOptions, Hook)
}

// Budget reads INTERMEM_TOKEN_BUDGET (settings.Budget).
func Budget(env *cli.Env) int { return settings.Budget(env.Get) }

// EnvFor builds the Gather environment for a project and a session cwd.
func EnvFor(env *cli.Env, p *project.Project, cwd string, now time.Time, budget int) Env {
	cwd = rendercache.SessionCwd(cwd, p.Root)
	// Without a readable key no operation verifies: none is described.
	key, _ := userstate.Key(env, false)
	e := Env{
		Root: p.Root, MemoryDir: p.MemoryDir, Cwd: cwd,
		ConfigDir: project.ConfigDir(env), Home: env.Get("HOME"),
		Now: now, Budget: budget, Threshold: stability.Threshold(env.Get),
		Key: key, Places: p.Places(),
	}
	// An unusable config switches nothing off here: the commands refuse
	// to run, the hook logs it and the context says so (Env.Config).
	cfg, err := config.Read(p.StateDir)
	e.Config = err
	if err == nil {
		e.Sources, e.Identity = cfg.Sources, cfg.Project
		if !cfg.On(config.AutoMemory) {
			// Switched off: not catalogued, searched or served, and not
			// read either — no memory directory to list (memFiles), and
			// none in the render cache's key (the hook front's Key
			// makes the same).
			e.MemoryDir = ""
		}
	}
	return e
}

// Hook renders the context for a SessionStart payload. When the store
// cannot be read in time it serves the cached rendering instead (marked
// as cached), or nothing.
func Hook(ctx context.Context, h *hookio.Hook) ([]byte, error) {
	if h.Input.Event != "SessionStart" {
		return nil, nil
	}
	p := h.Project
	budget := Budget(h.Env)
	cache := cachePath(p.StateDir)
	// When nothing the last rendering depended on has changed, it is
	// exactly what a fresh one would be: serve it without opening the
	// store or reading any memory.
	deps := NewDeps()
	env := EnvFor(h.Env, p, h.Input.Cwd, h.Now, budget)
	if env.Config != nil {
		h.Logf("SessionStart: %v; it is ignored, no source switched off, until it is fixed or removed (intermem sources says what is wrong)", env.Config)
	}
	env.Deps = deps
	// A resumed or compacted session continues its own history: no
	// bootstrap.
	env.Resume = rendercache.GetsResume(h.Input.Source)
	env.Session = h.Input.SessionID
	key, renderPath := renderKey(env), p.Path(RenderCacheName)
	if text, ok := rendercache.Load(renderPath, key, env.Session, h.Now); ok {
		if text == "" {
			return nil, nil
		}
		return hookio.SessionStartOutput(text)
	}
	ix := LoadIndex(p.Path(IndexName))
	// The memory files are taken before the store is read for the rest:
	// their stored parses (the catalog's, which the Stop hook keeps) in
	// one short read transaction, then whatever changed since parsed here,
	// with the store's lock released, so that a Stop hook waiting to
	// write does not wait on that work. Gather uses these records.
	openStore := func() (*store.Store, error) {
		s, err := store.Open(p.Path("intermem.db"), store.Options{ReadOnly: true, Timeout: storeWait, Yield: true})
		if errors.Is(err, store.ErrNotExist) {
			return nil, nil
		}
		return s, err
	}
	lateMemory, lateRender := lateness(ctx)
	if mem, err := memFiles(deps, env.MemoryDir, closing(openStore), ix, lateMemory); err == nil {
		if mem.cut {
			return catchUp(h, env, ix, cache, fmt.Sprintf("read %d of %d memory files", len(mem.files), mem.listed))
		}
		env.mem = mem
	}
	deps.Stat(p.Path("intermem.db")) // before reading it: a later write invalidates
	deps.Stat(p.Path(config.Name))   // its sources switches (EnvFor)
	// The user's key decides which interrupted operations verify.
	if dir, err := userstate.Dir(h.Env); err == nil {
		deps.Stat(filepath.Join(dir, userstate.KeyName))
	}
	// GatherOpen reads the documents too before it opens the store, and
	// holds the store's lock only for its one read transaction.
	var openErr error
	in, err := GatherOpen(env, func() (*store.Store, error) {
		s, err := openStore()
		openErr = err
		return s, err
	}, ix)
	if err != nil {
		if servesCached(openErr, err) {
			return serveCached(h, env, ix, cache, err)
		}
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if lateRender() {
		return catchUp(h, env, ix, cache, "read the memory and the store")
	}
	in.Redact, in.Screen = ix.Redact, ix.Screen
	res := Render(in)
	// The caches are derived data: failing to write them costs the next
	// session some speed, never correctness.
	if res.Text != "" || exists(p.StateDir) {
		if err := p.EnsureStateDir(); err != nil {
			h.Logf("context cache: %v", err)
		} else {
			if err := ix.Save(p.Path(IndexName)); err != nil {
				h.Logf("%v", err)
			}
			if err := WriteCache(cache, res.Text, h.Now); err != nil {
				h.Logf("%v", err)
			}
			var rule SessionRule
			if in.Boot != nil {
				rule = in.Boot.Sessions
			}
			if err := saveRender(renderPath, key, renderValidUntil(in, h.Now), rule, deps, res.Text); err != nil {
				h.Logf("%v", err)
			}
		}
	}
	if res.Text == "" {
		return nil, nil
	}
	return hookio.SessionStartOutput(res.Text)
}

// A session start that its deadline cuts off keeps nothing, and what makes
// a session start cost more than its deadline — a new build, whose memos
// (Index) start from nothing, over a large memory on a busy machine —
// would then cost it again at every start. So Hook stops short of the
// deadline (lateness) where it can stop cleanly: between memory files,
// and before rendering. Then it saves the memos made so far (the next
// start takes those files from them, cheaply, and gets further) and
// answers with the last rendering, marked as cached (catchUp).

// lateness says when a session start stops to keep its work: the memory
// files are read in the first half of the time left before ctx's
// deadline (the store and the documents take most of the rest), and a
// quarter is kept for saving the memos and answering. A context without a
// deadline is never late.
var lateness = func(ctx context.Context) (memory, render func() bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		never := func() bool { return false }
		return never, never
	}
	left := time.Until(deadline)
	by := func(t time.Time) func() bool { return func() bool { return time.Now().After(t) } }
	return by(deadline.Add(-left / 2)), by(deadline.Add(-left / 4))
}

// catchUp ends a session start cut short after it had done what: the
// memos it made are saved for the next, and the last rendering is served
// (marked as cached), or nothing. No rendering is cached: this one is not
// a fresh computation.
func catchUp(h *hookio.Hook, env Env, ix *Index, cache, done string) ([]byte, error) {
	h.Logf("SessionStart: stopped near its deadline, having %s; what it derived is kept for the next session start", done)
	if exists(h.Project.StateDir) {
		if err := ix.Save(h.Project.Path(IndexName)); err != nil {
			h.Logf("%v", err)
		}
	}
	text := Cached(cache, env.Budget, "intermem could not read this project's memory in time; it goes on at the next session start")
	if text == "" {
		return nil, nil
	}
	return hookio.SessionStartOutput(text)
}

// serveCached answers a session start whose store could not be read: with
// the last rendering when there is one, otherwise with a rendering from
// the memory files alone (no stability, confidence or stale facts), which
// still beats no context at all — a project's first session can start
// while another session's Stop hook holds the store. Neither is cached.
func serveCached(h *hookio.Hook, env Env, ix *Index, cache string, why error) ([]byte, error) {
	reason := "the intermem store was busy"
	if !errors.Is(why, store.ErrLocked) {
		reason = "the intermem store could not be read"
	}
	text := Cached(cache, env.Budget, reason)
	if text != "" {
		h.Logf("SessionStart: %v; serving the cached context", why)
		return hookio.SessionStartOutput(text)
	}
	h.Logf("SessionStart: %v and no cached context; rendering from the memory files alone", why)
	note := "(" + reason + ", so confidence and stale facts are not shown)\n"
	env.Deps, env.Budget = nil, env.Budget-Tokens(note)
	if env.Budget <= 0 {
		return nil, nil
	}
	in, err := Gather(env, nil, ix)
	if err != nil {
		return nil, err
	}
	in.Redact, in.Screen = ix.Redact, ix.Screen
	if text = Render(in).Text; text == "" {
		return nil, nil
	}
	return hookio.SessionStartOutput(note + text)
}

// closing adapts a store opener to one whose store is released after use.
func closing(open func() (*store.Store, error)) func() (*store.Store, func(), error) {
	return func() (*store.Store, func(), error) {
		s, err := open()
		if err != nil || s == nil {
			return nil, func() {}, err
		}
		return s, func() { s.Close() }, nil
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// servesCached reports whether a session start whose read of the store
// failed with err (openErr: the open's failure, if that was it) serves
// the last rendering, marked as cached, instead of nothing: when the
// store could not be opened (busy, damaged), is damaged inside, or its
// read transaction panicked (a parse of hostile text, a bug) — the
// session gets the context it had, and the log says why. Anything else
// (the project's files unreadable, say) is an error as it is.
func servesCached(openErr, err error) bool {
	return openErr != nil || errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrPanicked)
}
