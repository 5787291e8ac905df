// Package failpoint lets crash tests stop a process at a named point.
//
// In a build with the tag "failpoint", Inject(name) exits the process with
// status 137 (what a SIGKILL looks like to a shell) when the environment
// variable INTERMEM_FAILPOINT equals name, and panics when it equals
// "panic:" and the name (how the proofs check every Main's recovery). In
// normal builds Inject is an empty function the compiler removes, so
// shipped binaries carry no test hooks.
//
// Names in use (each is a point between two durable steps):
//
//	promote:after-journal  the pending journal record is written; no file changed yet
//	promote:after-target   target documents written; journal not yet committed
//	promote:after-commit   journal committed; auto-memory not yet pruned
//	prune:after-backup     backups of the memory files written; memory unchanged
//	prune:after-write      memory files pruned; journal not yet marked pruned
//	archive:after-journal, archive:after-target, archive:after-commit
//	restore:after-journal, restore:after-target, restore:after-commit
//	migrate:after-journal, migrate:after-target, migrate:after-commit
//	tidy:after-journal, tidy:after-target, tidy:after-commit (then prune:*
//	                       for MEMORY.md's rewrite)
//	hook:body              a hook's body is about to run (not in Names:
//	                       no operation passes it)
package failpoint

// Names lists every failpoint, for crash matrices.
var Names = []string{
	"promote:after-journal", "promote:after-target", "promote:after-commit",
	"prune:after-backup", "prune:after-file", "prune:after-write",
	"archive:after-journal", "archive:after-target", "archive:after-commit",
	"restore:after-journal", "restore:after-target", "restore:after-commit",
	"migrate:after-journal", "migrate:after-target", "migrate:after-commit",
	"tidy:after-journal", "tidy:after-target", "tidy:after-commit",
}
