//go:build failpoint

package failpoint

import "os"

// Enabled reports whether this build has failpoints.
const Enabled = true

// Inject exits with status 137 when INTERMEM_FAILPOINT names this point,
// and panics when it is "panic:" and the name.
func Inject(name string) {
	switch os.Getenv("INTERMEM_FAILPOINT") {
	case name:
		os.Exit(137)
	case "panic:" + name:
		panic("failpoint " + name)
	}
}
