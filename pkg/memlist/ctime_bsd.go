//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package memlist

import "syscall"

func Ctime(st *syscall.Stat_t) int64 { return syscall.TimespecToNsec(st.Ctimespec) }

func Mtime(st *syscall.Stat_t) int64 { return syscall.TimespecToNsec(st.Mtimespec) }
