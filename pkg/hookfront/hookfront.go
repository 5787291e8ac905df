// Package hookfront is the hook front, cmd/intermem-hook: the one binary
// Claude Code runs for every intermem hook event. It answers the common
// cases itself and hands everything else to the full hooks, so that the
// common cases pay for starting a binary that links almost nothing
// (the full hooks link the store, the catalog, every source's parser and
// the redaction and screening engines: their start-up alone cost more
// than a quiet turn's whole work).
//
// What it answers, each by the full hook's own rule (the light packages
// both use, so the two cannot drift):
//
//   - Stop and SubagentStop with nothing to record: the quiet turn
//     (quiet.Quick, quiet.Check's decision: the stop.quiet copy bound to
//     the store's binding, the memory directory's listing with the
//     session's fingerprint, an empty spool), and at a Stop the turn counted (turns.Stop and
//     turns.Append) unless it is a checkpoint turn; in meta mode
//     (settings.Meta) a Stop does nothing, as the full hook; with
//     auto-memory switched off in config.json (config.On) every such turn
//     is quiet, no memory listed, as the full hook leaves the memory
//     alone then (package snapshot's off.go). Over a
//     directory of more than memlist.ChunkFiles memory files, the
//     listing's parts but one are taken as the copy records them, the part
//     picked by the turn's number in the tally (quiet.Quick says what that
//     trades): the quiet turn's work does not grow with the directory.
//   - SessionStart whose render cache still holds (rendercache.Load, with
//     the key intermem-inject would make): the cached rendering, printed
//     as intermem-inject prints it (payload.SessionStartOutput).
//
// Anything else — another event (SessionEnd always: its checkpoint or
// cleanup needs the store), a payload that does not parse, no project, a
// state directory that is not intermem's own or an unusable config.json
// (the full hook logs why; a SessionStart's context says the file is
// ignored), a copy or cache that does not hold, a checkpoint turn, any
// error — is handed over: the full binary (intermem-snapshot, or intermem-inject for
// SessionStart), found beside the front's own executable, replaces the
// front's process (exec, no extra process) with the payload as its stdin
// (handover_linux.go: a memfd). If it cannot be started, the front logs
// one line to the project's log when there is one and exits 0 without
// output: hooks fail open.
//
// Invariants: the front never writes but one line appended to the turn
// tally of a quiet Stop (and a log line); it opens every file of the state
// directory without following a link and without blocking; it always
// exits 0; it prints only a SessionStart's cached rendering.
package hookfront

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/intermem/intermem/pkg/clienv"
	"github.com/intermem/intermem/pkg/config"
	"github.com/intermem/intermem/pkg/logfile"
	"github.com/intermem/intermem/pkg/payload"
	"github.com/intermem/intermem/pkg/project"
	"github.com/intermem/intermem/pkg/quiet"
	"github.com/intermem/intermem/pkg/rendercache"
	"github.com/intermem/intermem/pkg/settings"
	"github.com/intermem/intermem/pkg/turns"
)

// The full hooks the front hands over to, beside its own executable.
const (
	Snapshot = "intermem-snapshot"
	Inject   = "intermem-inject"
)

// Name is the front's program name, for the log.
const Name = "intermem-hook"

const usage = `Usage: intermem-hook < payload.json

The hook Claude Code runs for every intermem hook event (SessionStart, Stop,
SubagentStop, SessionEnd) with the hook payload on stdin. It answers a
quiet turn and a session start whose cached context still holds itself,
and hands every other case to intermem-snapshot or intermem-inject (in the
same directory), which do the work. It prints only SessionStart's context
and always exits 0. Failures go to the project's .intermem/log.
`

// Options say where the full hooks are and how the process becomes one.
type Options struct {
	// Snapshot and Inject are the full hooks' paths; "" is the binary of
	// that name beside the running executable.
	Snapshot, Inject string
	// Exec replaces the process with the full hook at path, reading input
	// as its stdin (HandOver); it returns only when that failed.
	Exec func(path string, args []string, input []byte) error
}

// full is the path of the full hook name.
func (o Options) full(name string) (string, error) {
	if name == Inject && o.Inject != "" {
		return o.Inject, nil
	}
	if name == Snapshot && o.Snapshot != "" {
		return o.Snapshot, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(self), name), nil
}

// Main is the whole of cmd/intermem-hook. env.Dir may be empty: the
// working directory is then asked for only when it is needed (dir).
//
// Its own frame and those of the calls on a quiet turn's path stay small
// (what only another path needs is in functions of its own: parse, info,
// start, handOver, panicked): the main goroutine's stack begins at a few
// kilobytes, and a quiet turn that went deeper would grow it, copying it
// into fresh pages (COSTS: a fault each).
func Main(env *clienv.Env, args []string, o Options) (code int) {
	defer func() {
		if r := recover(); r != nil {
			panicked(env, r)
		}
		code = 0
	}()
	if len(args) == 1 && info(env, args[0]) {
		return 0
	}
	b, err := payload.ReadInput(env.Stdin)
	if err != nil {
		readFailed(env, err)
		return 0
	}
	var in payload.Input
	if parse(b, &in) == nil {
		switch in.Event {
		case "Stop", "SubagentStop":
			if Quiet(env, &in) {
				return 0
			}
		case "SessionStart":
			if start(env, &in, &o) {
				return 0
			}
		}
	}
	handOver(env, &in, args, b, &o)
	return 0
}

// parse is payload.Parse into in: the copies of an Input returned by
// value would take a few hundred bytes of Main's frame.
//
//go:noinline
func parse(b []byte, in *payload.Input) (err error) {
	*in, err = payload.Parse(b)
	return err
}

// info prints the usage or the version when arg asks for it, and reports
// whether it did.
//
//go:noinline
func info(env *clienv.Env, arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.Stdout, usage)
		return true
	case "-version", "--version", "version":
		fmt.Fprintf(env.Stdout, "%s %s\n", Name, clienv.Version)
		return true
	}
	return false
}

// start answers a SessionStart from the render cache (Start), printing
// its output; false to hand over.
//
//go:noinline
func start(env *clienv.Env, in *payload.Input, o *Options) bool {
	out, ok := Start(env, *in, *o)
	if ok && len(out) > 0 {
		_, _ = env.Stdout.Write(out)
	}
	return ok
}

// handOver replaces the process with the full hook for in's event, the
// payload b as its stdin; when that cannot be done it logs why (and the
// front exits 0).
//
//go:noinline
func handOver(env *clienv.Env, in *payload.Input, args []string, b []byte, o *Options) {
	full := Snapshot
	if in.Event == "SessionStart" {
		full = Inject
	}
	path, err := o.full(full)
	if err == nil {
		if err = o.Exec(path, args, b); err == nil {
			return // a test's Exec, which ran the full hook and returned
		}
	}
	logLine(env, *in, fmt.Sprintf("%s: cannot hand over to %s: %v", event(*in), full, err))
}

// readFailed logs why the payload could not be read (it stopped half-way
// and the writer kept the pipe open: payload.ErrIncomplete, with the
// bytes read; a read error). The turn is not handed over: the full hook
// could only log that its input was empty, or not JSON, which would hide
// why.
//
//go:noinline
func readFailed(env *clienv.Env, err error) {
	logLine(env, payload.Input{}, fmt.Sprintf("hook: read hook input: %v", err))
}

// panicked logs a panic of Main's. Nothing was printed; a quiet turn's
// count may have been appended, so the turn is not handed over a second
// time.
//
//go:noinline
func panicked(env *clienv.Env, r any) {
	logLine(env, payload.Input{}, fmt.Sprintf("panic: %v", r))
}

// resolve is the project the full hook would work on, with its state
// directory checked (project.CheckState) as hookio checks it before any
// body; nil for anything the full hook must see.
func resolve(env *clienv.Env, in *payload.Input) *project.Project {
	p, err := project.Resolve(env, dir(env, in))
	if err != nil || p.CheckState() != nil {
		return nil
	}
	return p
}

// dir is the directory the hook works in (payload.Input.Dir): the
// process's working directory (env.Dir, or os.Getwd when that is empty, as
// cmd/intermem-hook leaves it) is asked for only when neither the payload
// nor the environment names one — os.Getwd costs two stats and a system
// call, and Claude Code always sends an absolute cwd.
func dir(env *clienv.Env, in *payload.Input) string {
	if d := in.Dir(env.Get, ""); d != "" {
		return d
	}
	if env.Dir != "" {
		return env.Dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "." // clienv.FromOS's
	}
	return wd
}

// Quiet answers a Stop or SubagentStop that has nothing to do: true when
// it is done (nothing more to run), false to hand over.
func Quiet(env *clienv.Env, in *payload.Input) bool {
	p := resolve(env, in)
	if p == nil {
		return false
	}
	// The one read of config.json a turn makes, for both its switches.
	// An unusable one (a missing one is no error) is the full hook's to
	// log: it would otherwise go unsaid at every quiet turn.
	cfg, err := config.Read(p.StateDir)
	if err != nil {
		return false
	}
	// Meta mode: the full hook records nothing at all (continuity.Meta).
	if settings.Meta(env.Get, func() string { return cfg.Mode }) {
		return true
	}
	// Auto-memory switched off: the full hook neither lists nor reads
	// the memory (package snapshot's off.go), so the turn has nothing to
	// record but its count.
	off := !cfg.On(config.AutoMemory)
	// continuity.Checkpoint's count: a Stop (not one continuing a turn a
	// Stop hook blocked) is a turn, unless checkpoints are off. The
	// count is also the turn's number, which picks the part of a large
	// memory directory's listing the quiet check reads afresh
	// (quiet.Quick): with no count kept, there is no number, and the
	// listing is summed whole.
	interval := settings.Interval(env.Get)
	if interval == 0 {
		return off || quick(p, in.SessionID, -1)
	}
	if in.Event != "Stop" || in.Bool("stop_hook_active") {
		return off || uncounted(p, in.SessionID)
	}
	return count(env, p, in.SessionID, interval, off)
}

// quick is quiet.Quick for session's turn number turn (-1: none).
func quick(p *project.Project, session string, turn int) bool {
	return quiet.Quick(p.StateDir, p.Path("intermem.db"), p.MemoryDir, session, turn)
}

// uncounted decides a quiet turn that is not counted (a SubagentStop, a
// Stop continuing a blocked turn) by the number of the session's last
// counted turn, read from the tally: the turns' count moves the part on.
//
//go:noinline
func uncounted(p *project.Project, session string) bool {
	turn := -1
	if prev, ok := turns.Lookup(p.Path(turns.Name), session); ok {
		turn = prev.Turns
	}
	return quick(p, session, turn)
}

// count decides a Stop and counts it, when quiet (or the memory is
// switched off: off), in the turn tally: false when the tally is not
// usable as it is, the turn is a checkpoint turn (the full hook takes it)
// or it is not quiet.
//
//go:noinline
func count(env *clienv.Env, p *project.Project, session string, interval int, off bool) bool {
	path := p.Path(turns.Name)
	prev, ok := turns.Lookup(path, session)
	if !ok {
		return false // the full hook rewrites it
	}
	t, due := turns.Stop(prev, interval)
	if due || !(off || quick(p, session, t.Turns)) {
		return false
	}
	now, err := env.Now()
	if err != nil {
		now = time.Now().UTC()
	}
	t.Seen = now.Unix()
	return turns.Append(path, session, t) == nil
}

// Start answers a SessionStart whose cached rendering still holds: the
// output to print (nil for none) and true, or false to hand over.
func Start(env *clienv.Env, in payload.Input, o Options) ([]byte, bool) {
	p := resolve(env, &in)
	if p == nil {
		return nil, false
	}
	exe := o.renderer()
	if exe == "" {
		return nil, false
	}
	now, err := env.Now()
	if err != nil {
		now = time.Now().UTC()
	}
	k, usable := key(env, p, in, exe)
	if !usable {
		return nil, false // the full hook logs it, and its context says so
	}
	text, ok := rendercache.Load(p.Path(rendercache.Name), k, in.SessionID, now)
	if !ok {
		return nil, false
	}
	if text == "" {
		return nil, true
	}
	out, err := payload.SessionStartOutput(text)
	return out, err == nil
}

// renderer is the rendercache.ExeID of intermem-inject as its
// os.Executable names it (resolved), "" when it cannot be known. Beside
// the front's own executable, whose directory the kernel gives resolved,
// one lstat of it says as much (rendercache.RendererID); a path given in
// Options is resolved whole.
func (o Options) renderer() string {
	if o.Inject != "" {
		exe, err := filepath.EvalSymlinks(o.Inject)
		if err != nil {
			return ""
		}
		return rendercache.ExeID(exe)
	}
	exe, err := o.full(Inject)
	if err != nil {
		return ""
	}
	return rendercache.RendererID(exe)
}

// Key is the render cache key intermem-inject makes for in (inject.EnvFor
// and its Hook): exe is the renderer's rendercache.ExeID.
func Key(env *clienv.Env, p *project.Project, in payload.Input, exe string) rendercache.Key {
	k, _ := key(env, p, in, exe)
	return k
}

// key is Key, and whether p's config.json is usable (or missing).
func key(env *clienv.Env, p *project.Project, in payload.Input, exe string) (rendercache.Key, bool) {
	k := rendercache.Key{
		Exe: exe, Root: p.Root, MemoryDir: p.MemoryDir, Cwd: rendercache.SessionCwd(in.Cwd, p.Root),
		ConfigDir: project.ConfigDir(env), Home: env.Get("HOME"), Resume: rendercache.GetsResume(in.Source),
		Budget: settings.Budget(env.Get), Threshold: settings.Threshold(env.Get),
	}
	// An unusable config switches nothing: inject.EnvFor's rule, which
	// also names no memory directory when auto-memory is switched off.
	cfg, err := config.Read(p.StateDir)
	if err == nil {
		k.Identity = cfg.Project
		if !cfg.On(config.AutoMemory) {
			k.MemoryDir = ""
		}
	}
	return k, err == nil
}

// logLine writes one line to the project's log (or, with no project,
// CLAUDE_PLUGIN_DATA's, as hookio does); nowhere when neither is known.
func logLine(env *clienv.Env, in payload.Input, msg string) {
	defer func() { _ = recover() }()
	var path string
	p, err := project.Resolve(env, dir(env, &in))
	switch {
	case err == nil:
		if p.CheckState() != nil {
			return // the bad entry may be the log itself
		}
		if err := p.EnsureStateDir(); err != nil {
			return
		}
		path = p.Path("log")
	case errors.Is(err, project.ErrNoProject):
		return
	case env.Get("CLAUDE_PLUGIN_DATA") != "":
		path = filepath.Join(env.Get("CLAUDE_PLUGIN_DATA"), "intermem.log")
	default:
		return
	}
	logfile.New(path, Name, nil, nil).Printf("%s", msg)
}

func event(in payload.Input) string {
	if in.Event == "" {
		return "hook"
	}
	return in.Event
}
