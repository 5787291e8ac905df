package cli

import "testing"

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 19946: "19,946",
		100000: "100,000", 1234567: "1,234,567", -1000: "-1,000", -999: "-999",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "entries", 1: "entry", 2: "entries"} {
		if got := Plural(n, "entry", "entries"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
