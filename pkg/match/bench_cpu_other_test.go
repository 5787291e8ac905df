//go:build !unix

package match

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
