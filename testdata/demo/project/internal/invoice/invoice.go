// Package invoice models invoices. Money is integer cents.
package invoice

// Clock is injected so golden tests stay stable.
type Clock interface{ Now() int64 }

// Invoice is one bill.
type Invoice struct {
	Customer string
	Cents    int64
}

// New returns an invoice.
func New(customer string, cents int64) Invoice { return Invoice{Customer: customer, Cents: cents} }

// Total formats the amount.
func (i Invoice) Total() string { return FormatCents(i.Cents) }
