// Command fakeapi serves the loopback fake Messages API of package
// e2e/fakeapi on its own, for poking at a real Claude Code by hand:
//
//	fakeapi -addr 127.0.0.1:8765 -log /tmp/requests.jsonl &
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=sk-fake claude -p hi
//
// Run both inside a loopback-only network namespace (unshare -n) so that
// nothing can leave the machine. Each request is appended to the log as one
// JSON object {"seq","method","path","body"}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/intermem/intermem/e2e/fakeapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "listen address")
	logPath := flag.String("log", "", "append every request to this JSONL file")
	flag.Parse()

	var mu sync.Mutex
	var log *os.File
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeapi: error: %v\n", err)
			os.Exit(1)
		}
		log = f
	}
	h := fakeapi.New(nil)
	if log != nil {
		h.OnRequest = func(r *fakeapi.Request) {
			mu.Lock()
			defer mu.Unlock()
			_ = json.NewEncoder(log).Encode(map[string]any{
				"seq": r.Seq, "method": r.Method, "path": r.Path, "body": json.RawMessage(orNull(r.Body)),
			})
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeapi: error: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "fakeapi: listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintf(os.Stderr, "fakeapi: error: %v\n", err)
		os.Exit(1)
	}
}

func orNull(b []byte) []byte {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}
