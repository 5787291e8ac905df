// Package userstate locates intermem's per-user state: what belongs to the
// user running intermem rather than to any one project, and so must never
// live in a project (a project can be copied, committed, shared or planted).
//
// The directory is $XDG_STATE_HOME/intermem, else
// $HOME/.local/state/intermem (the XDG base-directory rules: a relative
// XDG_STATE_HOME is ignored). It holds:
//
//   - key: the user's secret key (32 random bytes, hex), which binds every
//     journal operation to the user, the store and the project that
//     recorded it (package journal). It is created on first use, 0600 in a
//     0700 directory, by linking a fully written temporary file into place,
//     so two first uses at once agree on one key. It is never regenerated:
//     a damaged key is an error, because a new key would silently make
//     every interrupted operation unverifiable.
package userstate

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/intermem/intermem/pkg/atomicfile"
	"github.com/intermem/intermem/pkg/cli"
)

// KeyName is the key file's name in Dir.
const KeyName = "key"

// keyBytes is the key's length.
const keyBytes = 32

// ErrNoHome is returned when neither XDG_STATE_HOME nor HOME names an
// absolute directory.
var ErrNoHome = errors.New("no per-user state directory: set HOME (or XDG_STATE_HOME) to an absolute path")

// ErrNoKey is returned by a lookup that may not create the key when there
// is none yet.
var ErrNoKey = errors.New("no per-user key yet")

// ErrBadKey is returned when the key file exists but is not a key of this
// user: not a regular file, owned by someone else, or not 32 hex bytes.
var ErrBadKey = errors.New("per-user key is unusable")

// Dir returns the per-user state directory of env. It does not create it.
func Dir(env *cli.Env) (string, error) {
	if x := env.Get("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "intermem"), nil
	}
	if h := env.Get("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "intermem"), nil
	}
	return "", ErrNoHome
}

// Key returns the user's secret key. With create, a missing key is made;
// without it (dry runs and listings, which write nothing), a missing key
// is ErrNoKey.
func Key(env *cli.Env, create bool) ([]byte, error) {
	dir, err := Dir(env)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, KeyName)
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if !create {
		return nil, ErrNoKey
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := makeKey(dir, path); err != nil {
		return nil, err
	}
	return readKey(path)
}

// makeKey writes a new key beside path and links it into place; if another
// process won the race, its key is kept.
func makeKey(dir, path string) error {
	var raw [keyBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("make key: %w", err)
	}
	tmp, err := atomicfile.Temp(dir, KeyName, []byte(hex.EncodeToString(raw[:])+"\n"), atomicfile.Options{Perm: 0o600})
	if err != nil {
		return fmt.Errorf("make key: %w", err)
	}
	defer os.Remove(tmp)
	// link(2), not rename(2): a key another process made first is kept.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make key: %w", err)
	}
	atomicfile.SyncDir(dir)
	return nil
}

// readKey reads the key file without following a link, and requires it to
// be this user's regular file. A key readable by others is made private.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symlink", ErrBadKey, path)
		}
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadKey, path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%w: %s is owned by uid %d", ErrBadKey, path, sys.Uid)
	}
	if st.Mode().Perm()&0o077 != 0 {
		_ = f.Chmod(0o600)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*keyBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != keyBytes {
		return nil, fmt.Errorf("%w: %s does not hold a key", ErrBadKey, path)
	}
	return key, nil
}
