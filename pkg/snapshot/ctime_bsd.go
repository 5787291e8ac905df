//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package snapshot

import "syscall"

func ctimeOf(st *syscall.Stat_t) int64 { return syscall.TimespecToNsec(st.Ctimespec) }
