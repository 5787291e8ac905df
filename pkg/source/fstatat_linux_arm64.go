package source

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
