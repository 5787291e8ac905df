package continuity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/cli"
	"github.com/intermem/intermem/pkg/store"
	"github.com/intermem/intermem/pkg/userstate"
)

// UserStoreName is the per-user store's file name in userstate.Dir: the
// records of scope user (preferences, patterns, conventions that hold
// across projects) and the registry of the projects this user has used
// intermem's continuity commands in. It is a store like a project's
// (package store), outside every project.
const UserStoreName = "user.db"

// ErrUserStore is returned when the per-user store cannot be used; the
// project scope works without it.
var ErrUserStore = errors.New("the per-user store is unavailable")

// OpenUser opens the per-user store. With create, the directory and the
// store are made when missing; without it, a missing store is
// store.ErrNotExist.
func OpenUser(env *cli.Env, create bool, timeout time.Duration) (*store.Store, error) {
	dir, err := userstate.Dir(env)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUserStore, err)
	}
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUserStore, err)
		}
	}
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrUserStore, dir)
	}
	path := filepath.Join(dir, UserStoreName)
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUserStore, path)
	}
	s, err := store.Open(path, store.Options{ReadOnly: !create, Timeout: timeout})
	if err != nil {
		if errors.Is(err, store.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrUserStore, err)
	}
	return s, nil
}

// Register records in the per-user store that the project at root used
// intermem at now.
func Register(tx *bolt.Tx, root string, now time.Time) error {
	p, _, err := store.GetUserProject(tx, root)
	if err != nil {
		p = store.UserProject{}
	}
	if p.First.IsZero() {
		p.First = now.UTC()
	}
	p.Root, p.Last = root, now.UTC()
	return store.PutUserProject(tx, &p)
}

// Projects returns the registered projects, most recently used first.
func Projects(tx *bolt.Tx) ([]store.UserProject, error) {
	var out []store.UserProject
	err := store.EachUserProject(tx, func(k string, p *store.UserProject) error {
		if p.Root == k && filepath.IsAbs(k) {
			out = append(out, *p)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	return out, err
}
