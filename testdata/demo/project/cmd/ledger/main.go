// Command ledger issues and tracks invoices.
package main

import (
	"fmt"
	"os"

	"example.com/ledgerline/internal/invoice"
)

func main() {
	inv := invoice.New("ACME", 12500)
	fmt.Fprintln(os.Stdout, inv.Total())
}
