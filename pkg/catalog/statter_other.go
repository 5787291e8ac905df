//go:build !linux

package catalog

import (
	"io/fs"
	"os"

	"github.com/intermem/intermem/pkg/source"
)

// statter stats the paths a witness covers (statter_linux.go stats those
// below its directory relative to it).
type statter struct{}

func openStatter(string) *statter { return &statter{} }

func (*statter) close() {}

// stat is os.Lstat (os.Stat when follow) of abs: its mode and its
// fingerprint; false when it cannot be stat'd.
func (*statter) stat(abs string, follow bool) (fs.FileMode, source.Fingerprint, bool) {
	st := os.Lstat
	if follow {
		st = os.Stat
	}
	fi, err := st(abs)
	if err != nil {
		return 0, source.Fingerprint{}, false
	}
	return fi.Mode(), source.FingerprintOf(fi), true
}
