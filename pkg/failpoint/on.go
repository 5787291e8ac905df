//go:build failpoint

package failpoint

import "os"

// Enabled reports whether this build has failpoints.
const Enabled = true

// Inject exits with status 137 when INTERMEM_FAILPOINT names this point.
func Inject(name string) {
	if os.Getenv("INTERMEM_FAILPOINT") == name {
		os.Exit(137)
	}
}
