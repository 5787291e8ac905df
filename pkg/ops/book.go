package ops

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intermem/intermem/pkg/journal"
	"github.com/intermem/intermem/pkg/plan"
	"github.com/intermem/intermem/pkg/store"
)

// Book is the store bookkeeping an operation does when it commits. It
// travels inside the journaled Op (journal.Op.Commit), so an operation
// that a crash interrupted records exactly the same things when recovery
// commits it: no promoted fact without its record, no rejection forgotten,
// no archived fact still believed live.
type Book struct {
	// Promoted records to put (promotion, archive, restore).
	Promoted []store.Promoted `json:"promoted,omitempty"`
	// Rejected entries to remember.
	Rejected []store.Decision `json:"rejected,omitempty"`
	// PlanCreated identifies the plan this operation applies; it is marked
	// applied if it is still the current one.
	PlanCreated time.Time `json:"plan_created,omitzero"`
}

// Attach stores b in op.
func (b Book) Attach(op *journal.Op) error {
	raw, err := json.Marshal(&b)
	if err != nil {
		return fmt.Errorf("journal bookkeeping: %w", err)
	}
	op.Commit = raw
	return nil
}

// commit is Kinds.Commit: it applies an Op's bookkeeping in the commit
// transaction.
func commit(tx *bolt.Tx, op *journal.Op) error {
	if len(op.Commit) == 0 {
		return nil
	}
	var b Book
	if err := json.Unmarshal(op.Commit, &b); err != nil {
		return fmt.Errorf("journal bookkeeping of %s: %w", op.ID, err)
	}
	return b.Apply(tx, op.ID)
}

// Apply records b in tx for the operation opID: directly, for bookkeeping
// with nothing to journal (an apply that only rejects), or through commit.
func (b Book) Apply(tx *bolt.Tx, opID string) error {
	for i := range b.Promoted {
		r := b.Promoted[i]
		if r.Op == "" {
			r.Op = opID
		}
		if err := store.PutPromoted(tx, &r); err != nil {
			return err
		}
	}
	if err := b.overlay(tx, opID); err != nil {
		return err
	}
	for i := range b.Rejected {
		if err := store.PutRejection(tx, &b.Rejected[i]); err != nil {
			return err
		}
	}
	if !b.PlanCreated.IsZero() {
		var pl plan.Plan
		ok, err := store.GetPlan(tx, &pl)
		if err != nil {
			return err
		}
		if ok && pl.Created.Equal(b.PlanCreated) {
			pl.AppliedBy = opID
			if err := store.PutPlan(tx, &pl); err != nil {
				return err
			}
		}
	}
	return nil
}

// overlay names, in each fact's overlay, the operation that promoted it
// and the one that archived it (cleared when a restore brings it back), so
// `intermem provenance` can say which operation did what.
func (b Book) overlay(tx *bolt.Tx, opID string) error {
	cat := store.Catalog(tx)
	for i := range b.Promoted {
		r := &b.Promoted[i]
		o, _ := cat.Overlay(r.ID)
		by := r.Op
		if by == "" {
			by = opID
		}
		archivedBy := ""
		if r.Archived {
			archivedBy = opID
		}
		if o.PromotedBy == by && o.ArchivedBy == archivedBy {
			continue
		}
		o.PromotedBy, o.ArchivedBy = by, archivedBy
		if err := cat.PutOverlay(r.ID, &o); err != nil {
			return err
		}
	}
	return nil
}
