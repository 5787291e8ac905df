package continuity

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkReadRebuilt measures what a session start over a lost store
// pays to read the export through a scratch rebuild (ReadRebuilt): the
// scratch store's creation, the rebuild and one read.
func BenchmarkReadRebuilt(b *testing.B) {
	data := []byte(`{"kind":"phase","n":1,"name":"design","summary":"Design agreed.","started":"2026-11-01T09:00:00Z","closed":"2026-11-02T09:00:00Z"}
{"kind":"phase","n":2,"name":"build","started":"2026-11-02T09:00:00Z"}
{"kind":"decision","id":"d1","text":"Postgres for storage","why":"the team runs it already","phase":1,"time":"2026-11-01T10:00:00Z"}
{"kind":"checkpoint","id":"cp-1","summary":"Handlers for /users done.","phase":2,"time":"2026-11-02T10:00:00Z"}
{"kind":"head","phase":2,"checkpoint":"cp-1"}
`)
	for b.Loop() {
		if _, err := ReadRebuilt(data, func(tx *bolt.Tx) error { _, err := Decisions(tx, Filter{}); return err }); err != nil {
			b.Fatal(err)
		}
	}
}
