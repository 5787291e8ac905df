package rendercache

// Listing and ListingVal are listing and listingVal, for the tests.
var (
	Listing    = listing
	ListingVal = listingVal
)
