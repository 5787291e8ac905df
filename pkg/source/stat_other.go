//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package source

import "io/fs"

// sysStat: this system reports no inode or status-change time through
// os.Stat; the fingerprint is size and modification time alone.
func sysStat(fs.FileInfo) (uint64, int64) { return 0, 0 }
