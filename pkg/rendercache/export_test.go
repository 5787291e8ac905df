package rendercache

// Listing and ListingVal are listing and listingVal, for the tests.
var (
	Listing    = listing
	ListingVal = listingVal
)

// Share sets how Load shares the facts of a file out: parMin (the fewest
// records checked on two goroutines), unitMax (the most records of a
// unit) and mainShares (false: the helper checks every unit); the
// returned func restores them.
func Share(min int64, unit int32, main bool) (restore func()) {
	a, b, c := parMin, unitMax, mainShares
	parMin, unitMax, mainShares = min, unit, main
	return func() { parMin, unitMax, mainShares = a, b, c }
}

// UnitMax is the most records of a unit.
func UnitMax() int32 { return unitMax }
