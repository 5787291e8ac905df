//go:build !failpoint

package failpoint

// Enabled reports whether this build has failpoints.
const Enabled = false

// Inject does nothing in normal builds.
func Inject(string) {}
