package mcpserver

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// drainWait bounds how long the end of stdin waits for the answers to
// requests already read.
const drainWait = 10 * time.Second

// drain sits between stdio and the SDK's transport and holds back the end
// of stdin until every request read before it has been answered.
//
// The SDK cancels requests still in flight when its reader meets EOF: the
// peer is gone, so there is nobody to answer. That holds for Claude Code,
// which closes stdin only when the session ends, but not for a client that
// writes its requests and then closes stdin to say it has no more
// (`intermem-mcp < requests.jsonl`, a test, a script): it would get some
// answers or none, depending on scheduling. drain counts the requests
// (JSON-RPC messages with a method and an id) that pass through the
// reader and the responses (an id and no method) that pass through the
// writer, and returns EOF only when they match, or after drainWait.
type drain struct {
	in  io.ReadCloser
	out io.WriteCloser

	mu      sync.Mutex
	changed *sync.Cond
	pending int
	inLine  []byte // the partial line last read
	outLine []byte // the partial line last written
}

func newDrain(in io.ReadCloser, out io.WriteCloser) *drain {
	d := &drain{in: in, out: out}
	d.changed = sync.NewCond(&d.mu)
	return d
}

// reader and writer are the two ends the transport uses.
func (d *drain) reader() io.ReadCloser  { return drainReader{d} }
func (d *drain) writer() io.WriteCloser { return drainWriter{d} }

type drainReader struct{ d *drain }

func (r drainReader) Read(p []byte) (int, error) {
	n, err := r.d.in.Read(p)
	r.d.mu.Lock()
	r.d.inLine = scanLines(append(r.d.inLine, p[:n]...), func(line []byte) {
		if isRequest(line) {
			r.d.pending++
		}
	})
	if err == io.EOF {
		r.d.waitAnswered()
	}
	r.d.mu.Unlock()
	return n, err
}

func (r drainReader) Close() error { return r.d.in.Close() }

// waitAnswered waits, with d.mu held, until no request is pending or
// drainWait has passed.
func (d *drain) waitAnswered() {
	deadline := time.AfterFunc(drainWait, func() {
		d.mu.Lock()
		d.pending = 0
		d.changed.Broadcast()
		d.mu.Unlock()
	})
	defer deadline.Stop()
	for d.pending > 0 {
		d.changed.Wait()
	}
}

type drainWriter struct{ d *drain }

func (w drainWriter) Write(p []byte) (int, error) {
	n, err := w.d.out.Write(p)
	w.d.mu.Lock()
	w.d.outLine = scanLines(append(w.d.outLine, p[:n]...), func(line []byte) {
		if isResponse(line) && w.d.pending > 0 {
			w.d.pending--
			w.d.changed.Broadcast()
		}
	})
	w.d.mu.Unlock()
	return n, err
}

func (w drainWriter) Close() error { return w.d.out.Close() }

// scanLines calls fn on each complete line of buf and returns the
// incomplete rest (kept only up to maxFrame: a longer line is not a
// message the transport accepts either).
func scanLines(buf []byte, fn func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		fn(buf[:i])
		buf = buf[i+1:]
	}
	if len(buf) > maxFrame {
		return nil
	}
	return append([]byte(nil), buf...)
}

func isRequest(line []byte) bool {
	r := gjson.ParseBytes(line)
	return r.Get("method").Exists() && r.Get("id").Exists()
}

func isResponse(line []byte) bool {
	r := gjson.ParseBytes(line)
	return !r.Get("method").Exists() && r.Get("id").Exists()
}
