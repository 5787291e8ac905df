package journal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/tidwall/gjson"
	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/confine"
	"github.com/intermem/intermem/pkg/store"
)

// ErrNoKey is returned when an Op must be signed and the journal has no
// user key.
var ErrNoKey = errors.New("journal: no per-user key to sign the operation with")

// macDomain separates journal MACs from any other use of the key.
const macDomain = "intermem journal op v1"

// sign returns op's MAC: HMAC-SHA256 under the key over the store id, the
// project root and op's JSON encoding with an empty MAC.
func (j *Journal) sign(storeID string, op *Op) (string, error) {
	if len(j.Key) == 0 {
		return "", ErrNoKey
	}
	if storeID == "" {
		return "", errors.New("journal: the store has no id (opened read-only?)")
	}
	return mac(j.Key, storeID, j.Places.Root, op)
}

func mac(key []byte, storeID, root string, op *Op) (string, error) {
	c := *op
	c.MAC = ""
	raw, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("journal: encode %s: %w", op.ID, err)
	}
	m := hmac.New(sha256.New, key)
	for _, part := range [][]byte{[]byte(macDomain), []byte(storeID), []byte(root), raw} {
		var n [8]byte
		for i, l := 0, uint64(len(part)); i < 8; i++ {
			n[i] = byte(l >> (8 * (7 - i)))
		}
		m.Write(n[:])
		m.Write(part)
	}
	return hex.EncodeToString(m.Sum(nil)), nil
}

// Reasons an Op is refused.
var (
	// ErrNotOurs is the reason for an Op whose MAC does not verify: made
	// by another user, for another store or project root, or planted.
	ErrNotOurs = errors.New("not created by this user's intermem for this project")
	// ErrUnsigned is the reason for an Op with no MAC at all: recorded by
	// an intermem from before operations were signed, or planted (nothing
	// shows which). Its Problem wraps ErrNotOurs too.
	ErrUnsigned = errors.New("unsigned: recorded by an intermem from before operations were signed, or planted")
	// ErrStepOutside is the reason for an Op with a step whose path is not
	// one of intermem's places now.
	ErrStepOutside = errors.New("a step writes outside intermem's places")
	// ErrDamaged is the reason for a record that no longer decodes.
	ErrDamaged = errors.New("the record no longer decodes")
)

// Problem is a journal record recovery leaves alone: an incomplete Op it
// refuses to replay, or a record that no longer decodes. It is kept until
// the user drops it (Drop).
type Problem struct {
	ID  string // the record's key
	Op  *Op    // nil when the record does not decode
	Err error  // ErrUnsigned, ErrNotOurs, ErrStepOutside or ErrDamaged, wrapped
	// Path is the offending step path (as the step names it, or where it
	// resolves), for ErrStepOutside.
	Path string
}

// Why is the reason in words, without the path.
func (p Problem) Why() string {
	for _, e := range []error{ErrUnsigned, ErrNotOurs, ErrStepOutside, ErrDamaged} {
		if errors.Is(p.Err, e) {
			return e.Error()
		}
	}
	return p.Err.Error()
}

// Scan is the journal as recovery sees it.
type Scan struct {
	Ops      []*Op // verified incomplete Ops, oldest first (by id)
	Problems []Problem
}

// Scan reads every journal record: incomplete Ops that verify (MAC, id,
// every step path a place now) are to be replayed; incomplete Ops that do
// not, and records that no longer decode, are problems. Finished Ops are
// history and are not checked.
func (j *Journal) Scan(tx *bolt.Tx) (*Scan, error) {
	sc := &Scan{}
	storeID := store.ID(tx)
	err := store.EachJournal(tx, func(key string, raw []byte) error {
		// A finished Op is history: its state alone says so, read without
		// decoding its steps (a session start scans the journal). Only a
		// record that is valid JSON is judged this way; any other is
		// decoded below and reported damaged.
		if gjson.ValidBytes(raw) {
			if st := gjson.GetBytes(raw, "state"); st.Type == gjson.String && State(st.Str) != Pending && State(st.Str) != Committed {
				return nil
			}
		}
		op := new(Op)
		if err := json.Unmarshal(raw, op); err != nil {
			sc.Problems = append(sc.Problems, Problem{ID: key, Err: fmt.Errorf("%w: %v", ErrDamaged, err)})
			return nil
		}
		if op.State != Pending && op.State != Committed {
			return nil
		}
		if p, ok := j.verify(storeID, key, op); !ok {
			sc.Problems = append(sc.Problems, p)
			return nil
		}
		sc.Ops = append(sc.Ops, op)
		return nil
	})
	sort.Slice(sc.Ops, func(a, b int) bool { return sc.Ops[a].ID < sc.Ops[b].ID })
	return sc, err
}

// verify checks an incomplete Op read from the store.
func (j *Journal) verify(storeID, key string, op *Op) (Problem, bool) {
	p := Problem{ID: key, Op: op}
	_, known := j.Kinds.Final(op.Kind)
	ok := len(j.Key) > 0 && storeID != "" && op.ID == key && validID(op.ID) && known
	if ok {
		want, err := mac(j.Key, storeID, j.Places.Root, op)
		ok = err == nil && hmac.Equal([]byte(want), []byte(op.MAC))
	}
	if !ok {
		p.Err = ErrNotOurs
		if op.MAC == "" {
			p.Err = fmt.Errorf("%w: %w", ErrNotOurs, ErrUnsigned)
		}
		// Say where a planted Op would have written, too.
		if path, bad := j.outside(op); bad {
			p.Path = path
		}
		return p, false
	}
	if path, bad := j.outside(op); bad {
		p.Err, p.Path = ErrStepOutside, path
		return p, false
	}
	return p, true
}

// outside returns the first step path that is not one of the places now.
func (j *Journal) outside(op *Op) (string, bool) {
	for _, s := range op.Steps {
		if _, err := j.Places.Resolve(s.Path, op.AllowOutside); err != nil {
			if j.Places.Classify(s.Path) != confine.None {
				if r, rerr := confine.Real(s.Path); rerr == nil {
					return r, true // a place by name, elsewhere for real
				}
			}
			return s.Path, true
		}
	}
	return "", false
}

// validID reports whether id can name a temporary file and a backup
// directory: letters, digits, '-' and '_' only.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ErrNotAProblem is returned by Drop for a record that recovery would
// replay (discard it instead) or that does not exist.
var ErrNotAProblem = errors.New("no refused or damaged journal record with that id")

// Drop deletes a refused or damaged journal record, touching no file. It
// is the only way such a record goes: recovery never replays it and never
// deletes it by itself.
func (j *Journal) Drop(id string) (Problem, error) {
	var dropped Problem
	err := j.Store.Update(func(tx *bolt.Tx) error {
		sc, err := j.Scan(tx)
		if err != nil {
			return err
		}
		for _, p := range sc.Problems {
			if p.ID == id {
				dropped = p
				return store.DeleteJournal(tx, id)
			}
		}
		return fmt.Errorf("%w: %q", ErrNotAProblem, id)
	})
	return dropped, err
}
