package memlist

import "syscall"

func Ctime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

func Mtime(st *syscall.Stat_t) int64 { return st.Mtim.Nano() }
