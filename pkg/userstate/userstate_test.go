package userstate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/intermem/intermem/pkg/cli"
)

func env(vars ...string) *cli.Env { return cli.New(vars, "/", nil, nil, nil) }

func TestDir(t *testing.T) {
	for _, c := range []struct {
		vars []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.local/state/intermem"},
		{[]string{"HOME=/h", "XDG_STATE_HOME=/x"}, "/x/intermem"},
		{[]string{"HOME=/h", "XDG_STATE_HOME=rel"}, "/h/.local/state/intermem"}, // relative: ignored
	} {
		got, err := Dir(env(c.vars...))
		if err != nil || got != c.want {
			t.Errorf("Dir(%v) = %q, %v; want %q", c.vars, got, err, c.want)
		}
	}
	if _, err := Dir(env("HOME=relative")); !errors.Is(err, ErrNoHome) {
		t.Errorf("relative HOME: %v, want ErrNoHome", err)
	}
	if _, err := Dir(env()); !errors.Is(err, ErrNoHome) {
		t.Errorf("no HOME: %v, want ErrNoHome", err)
	}
}

// The key is made once, private, and read back the same; a lookup that
// may not create finds none before.
func TestKeyMadeOnceAndPrivate(t *testing.T) {
	home := t.TempDir()
	e := env("HOME=" + home)
	if _, err := Key(e, false); !errors.Is(err, ErrNoKey) {
		t.Fatalf("read-only lookup before creation: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a read-only lookup created something")
	}
	k1, err := Key(e, true)
	if err != nil || len(k1) != 32 {
		t.Fatalf("create: %x %v", k1, err)
	}
	k2, err := Key(e, false)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("reread: %x %v", k2, err)
	}
	dir := filepath.Join(home, ".local", "state", "intermem")
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Join(dir, KeyName)); st.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the key directory: %v", ents)
	}
}

// Two first uses at once agree on one key.
func TestKeyRace(t *testing.T) {
	e := env("HOME=" + t.TempDir())
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Key(e, true)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatalf("different keys: %x %x", k, keys[0])
		}
	}
}

// A key that is a link, or is not a key, is refused, never replaced.
func TestBadKeyRefused(t *testing.T) {
	home := t.TempDir()
	e := env("HOME=" + home)
	dir := filepath.Join(home, ".local", "state", "intermem")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, KeyName)
	os.WriteFile(path, []byte("not a key\n"), 0o600)
	if _, err := Key(e, true); !errors.Is(err, ErrBadKey) {
		t.Fatalf("garbage key: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "not a key\n" {
		t.Fatal("a bad key was replaced")
	}
	os.Remove(path)
	other := filepath.Join(home, "elsewhere")
	os.WriteFile(other, bytes.Repeat([]byte("ab"), 32), 0o600)
	os.Symlink(other, path)
	if _, err := Key(e, true); !errors.Is(err, ErrBadKey) {
		t.Fatalf("linked key: %v", err)
	}
}
