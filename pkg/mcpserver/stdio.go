package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tidwall/gjson"
)

// drainWait bounds how long the end of stdin waits for the answers to
// requests already read.
const drainWait = 10 * time.Second

// parseError is the JSON-RPC answer to a line that is not JSON.
const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: a message must be one line of JSON"}}` + "\n"

// tooLong is the JSON-RPC answer to a line longer than maxFrame.
const tooLong = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too long"}}` + "\n"

// stdio sits between the process's stdin and stdout and the SDK's
// transport, for two things the transport does not do.
//
// It answers a line that is not JSON (or is longer than maxFrame) with a
// JSON-RPC error and drops it: the transport would otherwise end the
// whole session at the first such line, and JSON-RPC asks for an error
// answer. Blank lines are dropped.
//
// It holds back the end of stdin until every request read before it has
// been answered. The SDK cancels requests still in flight when its reader
// meets EOF: the peer is gone, so there is nobody to answer. That holds
// for Claude Code, which closes stdin only when the session ends, but not
// for a client that writes its requests and then closes stdin to say it
// has no more (`intermem-mcp < requests.jsonl`, a test, a script): it
// would get some answers or none, depending on scheduling. stdio counts
// the requests (messages with a method and an id) it passes on and the
// responses (an id and no method) written back, and returns EOF only when
// they match, or after drainWait.
//
// Writes are serialized, and an error line of ours is written only
// between two whole messages of the SDK's.
type stdio struct {
	in  *bufio.Reader
	inC io.Closer
	out io.WriteCloser

	mu       sync.Mutex
	answered *sync.Cond
	pending  int
	next     []byte   // the rest of the line being handed to the transport
	err      error    // what reading stdin ended with
	outLine  []byte   // the partial line last written
	queued   [][]byte // our error lines, waiting for a message boundary
}

func newStdio(in io.ReadCloser, out io.WriteCloser) *stdio {
	s := &stdio{in: bufio.NewReaderSize(in, 64<<10), inC: in, out: out}
	s.answered = sync.NewCond(&s.mu)
	return s
}

// reader and writer are the two ends the transport uses.
func (s *stdio) reader() io.ReadCloser  { return stdioReader{s} }
func (s *stdio) writer() io.WriteCloser { return stdioWriter{s} }

type stdioReader struct{ s *stdio }

func (r stdioReader) Read(p []byte) (int, error) {
	s := r.s
	for len(s.next) == 0 {
		if s.err != nil {
			if s.err == io.EOF {
				s.mu.Lock()
				s.waitAnswered()
				s.mu.Unlock()
			}
			return 0, s.err
		}
		line, err := s.readLine()
		if len(line) > 0 {
			s.accept(line)
		}
		s.err = err
	}
	n := copy(p, s.next)
	s.next = s.next[n:]
	return n, nil
}

func (r stdioReader) Close() error { return r.s.inC.Close() }

// readLine returns the next line without its newline. A line longer than
// maxFrame is answered and skipped.
func (s *stdio) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		if len(line)+len(chunk) > maxFrame+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = s.in.ReadSlice('\n')
			}
			s.answer(tooLong)
			line = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), err
	}
}

// accept hands a line to the transport, or answers it when it is not
// JSON or not a message the transport takes (invalidRequest).
func (s *stdio) accept(line []byte) {
	if !json.Valid(line) {
		s.answer(parseError)
		return
	}
	if msg := invalidRequest(line); msg != "" {
		s.answer(msg)
		return
	}
	if r := gjson.ParseBytes(line); r.Get("method").Exists() && r.Get("id").Exists() {
		s.mu.Lock()
		s.pending++
		s.mu.Unlock()
	}
	s.next = append(line, '\n')
}

// invalidRequest returns the JSON-RPC error answering line, valid JSON,
// when the SDK's transport would refuse it, or "" to pass it on. The
// transport ends the session at a frame it cannot decode, and every later
// request is lost: a batch (an array: empty, holding anything but
// messages, or sent at all once the protocol version has none), a message
// whose id is neither a string, a number nor null, whose jsonrpc is not
// "2.0", whose method is not a string, a response without an id. Its own
// decoder judges the single message, so that what passes is what it
// takes. The answer carries the message's id when that is a string or a
// number (the client waits on it), else null.
func invalidRequest(line []byte) string {
	if line[0] == '[' {
		return errorAnswer("null", "invalid request: batches are not supported")
	}
	if _, err := jsonrpc.DecodeMessage(line); err == nil {
		return ""
	}
	id := "null"
	if r := gjson.GetBytes(line, "id"); r.Type == gjson.String || r.Type == gjson.Number {
		id = r.Raw
	}
	return errorAnswer(id, "invalid request: not a JSON-RPC 2.0 message this server takes")
}

// errorAnswer is the JSON-RPC "invalid request" error line for id (raw
// JSON).
func errorAnswer(id, message string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"` + message + `"}}` + "\n"
}

// answer writes one of our error lines at the next message boundary.
func (s *stdio) answer(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, []byte(line))
	s.flush()
}

// flush writes the queued lines if no message is half written. s.mu is
// held.
func (s *stdio) flush() {
	if len(s.outLine) > 0 {
		return
	}
	for _, l := range s.queued {
		_, _ = s.out.Write(l)
	}
	s.queued = nil
}

// waitAnswered waits, with s.mu held, until no request is pending or
// drainWait has passed.
func (s *stdio) waitAnswered() {
	deadline := time.AfterFunc(drainWait, func() {
		s.mu.Lock()
		s.pending = 0
		s.answered.Broadcast()
		s.mu.Unlock()
	})
	defer deadline.Stop()
	for s.pending > 0 {
		s.answered.Wait()
	}
}

type stdioWriter struct{ s *stdio }

func (w stdioWriter) Write(p []byte) (int, error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.out.Write(p)
	buf := append(s.outLine, p[:n]...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		if r := gjson.ParseBytes(buf[:i]); !r.Get("method").Exists() && r.Get("id").Exists() && s.pending > 0 {
			s.pending--
			s.answered.Broadcast()
		}
		buf = buf[i+1:]
	}
	s.outLine = append([]byte(nil), buf...)
	s.flush()
	return n, err
}

func (w stdioWriter) Close() error { return w.s.out.Close() }
