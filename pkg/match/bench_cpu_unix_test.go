//go:build unix

package match

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time used by the process so far. Benchmarks report
// it next to the wall time because the machines they run on are shared:
// wall time there measures the neighbours as much as the code.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
