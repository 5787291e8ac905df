// Package continuity is where the work stands, as opposed to what is
// durably true: checkpoints a later session resumes from, phases with a
// head pointer, and the decisions taken on the way, kept in intermem's
// store (schema 4: buckets checkpoints, phases, decided, head).
//
// # Model
//
// A phase is a numbered stretch of work (phase start N … phase close N).
// The head is the phase the agreed timeline stands at, and its latest
// checkpoint. Every record (checkpoint, phase, decision) carries the phase
// it belongs to, if any, and a status:
//
//   - valid: on the agreed timeline; recalled, searched, injected.
//   - invalidated: of a phase beyond a backtrack the user continued from;
//     kept, never recalled or injected, searched only with --all.
//   - archived: forgotten at a backtrack; kept so that phase restore can
//     bring it back (as invalidated: it is still of the abandoned
//     timeline), listed nowhere else.
//
// Starting phase N while the head is above N is a backtrack. Its choice
// (Continue, Forget, Abort) is made by the caller before StartPhase runs:
// the command asks on a terminal, else takes --on-backtrack, and the MCP
// and skill paths ask the user. Continue marks every valid record of a
// phase above N invalidated, Forget archives them, Abort changes nothing.
// The head then moves to N. Records without a phase are never touched.
//
// # Checkpoints
//
// The Stop hook counts turns per session in a small state file
// (.intermem/turns, package turns: an append-only tally, written without
// fsync: a lost count costs one checkpoint's timing, never a session; the
// hook front counts a quiet turn itself and hands a checkpoint turn over)
// and every Interval turns records a
// checkpoint from what is known without a model call: the session, the
// turn, the time, the git branch and HEAD read from .git files (never by
// running git), the files the session's transcript shows it editing (read
// from its tail, bounded), and the last assistant message from the
// payload, redacted, screened (a flagged message is kept but never
// injected) and truncated. SessionEnd records a final one, and in the
// same transaction deletes the session's memories of scope session
// (scoped.go: they were kept for that session alone). Hook
// checkpoints are of scope session: they serve the next session's resume
// note and nothing else. A manual checkpoint (intermem checkpoint, the
// checkpoint skill after the user's "save") is of scope project.
//
// # What SessionStart says
//
// Ahead of the rest of the context, within at most a quarter of the token
// budget (Bootstrap): the current phase, the resume note — the latest
// valid checkpoint of another session on the same branch (any branch when
// the session's has none) — and the latest decisions with why, screened
// and escaped like everything injected. A resumed or compacted session
// gets none: it continues its own history.
//
// # Invariants
//
//   - Hooks never hurt a session: every failure is a log line, a busy store
//     skips a checkpoint (the count is kept, so the next turn retries), and
//     nothing is printed on Stop or SessionEnd.
//   - The store never holds a secret: every text is redacted before it is
//     stored; text a person typed that screening flags is refused.
//   - Meta mode (INTERMEM_MODE=meta, or "mode": "meta" in
//     .intermem/config.json) records nothing: the Stop and SessionEnd hooks
//     do nothing at all, intermem-mcp refuses memory_write (mcpserver.ErrMeta),
//     and SessionStart and the read tools still serve. Commands a person
//     runs are that person's explicit choice and still write.
//   - Nothing reaches a committed file: continuity writes only the store
//     and .intermem state.
//   - A lost store is not a lost history: .intermem/continuity.jsonl
//     holds every long-term record on the agreed timeline, and a store
//     without any gets them back from it (rebuild.go), read as hostile.
package continuity
