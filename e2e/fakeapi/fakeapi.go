// Package fakeapi is a loopback stand-in for the Anthropic Messages API,
// just large enough for a real Claude Code to run a session against it
// offline.
//
// It answers POST /v1/messages (the client appends ?beta=true; the query is
// ignored) and nothing else: every other path gets a 404 with a JSON error
// body. A request with "stream": true gets a server-sent-event stream
// (message_start, one content_block_start/delta/stop per block,
// message_delta with the stop reason, message_stop); any other request gets
// one JSON message object.
//
// What the model says is decided by a Script from the request: by default a
// fixed text reply, or an acknowledgement when the last non-system message
// carries a tool_result. Every request body is kept, in order, so a test
// can assert on what Claude Code sent (injected hook context, MEMORY.md,
// the skills list).
package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultReply is the text the fake model answers with.
const DefaultReply = "FAKE-REPLY: hello from the fake server."

// ToolDoneReply is the text the fake model answers with after a tool ran.
const ToolDoneReply = "FAKE: tool finished, done."

// Request is one request the server received.
type Request struct {
	Seq    int    // 0-based arrival order
	Method string // HTTP method
	Path   string // URL path, without the query
	Body   []byte // raw body
	Stream bool   // the body asked for "stream": true
	// Messages is the decoded "messages" array of a Messages API request.
	Messages []Message
}

// Message is one element of a request's "messages" array. Content is kept
// raw: it is a string or an array of typed blocks.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Blocks decodes Content into typed blocks; a plain string becomes one text
// block.
func (m Message) Blocks() []Block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var bs []Block
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// Block is a content block of a request message or of a reply.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use (reply)
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result (request)
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText returns the text of a tool_result block, whose content is a
// string or an array of text blocks.
func (b Block) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var bs []Block
	_ = json.Unmarshal(b.Content, &bs)
	var out []string
	for _, x := range bs {
		out = append(out, x.Text)
	}
	return strings.Join(out, "\n")
}

// LastTurn returns the last message whose role is not "system" (Claude Code
// inserts a role:"system" message carrying environment, skills list and
// hook context after the first user message).
func (r *Request) LastTurn() (Message, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "system" {
			return r.Messages[i], true
		}
	}
	return Message{}, false
}

// LastTurnText returns the text blocks of the last turn, joined.
func (r *Request) LastTurnText() string {
	m, ok := r.LastTurn()
	if !ok {
		return ""
	}
	var out []string
	for _, b := range m.Blocks() {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

// ToolResults returns the tool_result blocks of the last turn.
func (r *Request) ToolResults() []Block {
	m, ok := r.LastTurn()
	if !ok || m.Role != "user" {
		return nil
	}
	var out []Block
	for _, b := range m.Blocks() {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// HasToolResult reports whether the last turn carries a tool_result, i.e.
// a tool the fake model asked for has run.
func (r *Request) HasToolResult() bool { return len(r.ToolResults()) > 0 }

// Reply is what the fake model answers.
type Reply struct {
	Blocks     []Block // text and tool_use blocks
	StopReason string  // "end_turn" or "tool_use"; derived when empty
	// Status, when not 0 or 200, makes the server answer with that HTTP
	// status and an API error body instead.
	Status int
}

// Text returns a reply of one text block.
func Text(s string) Reply { return Reply{Blocks: []Block{{Type: "text", Text: s}}} }

// ToolUse returns a reply asking Claude Code to run one tool.
func ToolUse(name string, input any) Reply {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: tool input: %v", err))
	}
	return Reply{Blocks: []Block{{Type: "tool_use", Name: name, Input: raw}}}
}

// A Script decides the reply to a Messages API request.
type Script func(*Request) Reply

// Default answers DefaultReply, or ToolDoneReply after a tool ran.
func Default(r *Request) Reply {
	if r.HasToolResult() {
		return Text(ToolDoneReply)
	}
	return Text(DefaultReply)
}

// Server is the fake API: an http.Handler that records every request.
// Start runs one on a loopback port.
type Server struct {
	URL string // http://127.0.0.1:<port> once started

	// OnRequest, when set before serving, is called with every request as
	// it arrives.
	OnRequest func(*Request)

	script Script
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
	seq    atomic.Int64
	ids    atomic.Int64

	mu   sync.Mutex
	reqs []*Request
}

// New returns a fake API handler that is not listening anywhere. A nil
// script means Default.
func New(script Script) *Server {
	if script == nil {
		script = Default
	}
	return &Server{script: script}
}

// Start listens on a free loopback port and serves until Close. A nil
// script means Default.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen: %w", err)
	}
	s := New(script)
	s.URL, s.ln, s.done = "http://"+ln.Addr().String(), ln, make(chan struct{})
	s.srv = &http.Server{Handler: s}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("fakeapi: serve: %v", err))
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Messages returns the Messages API requests received so far.
func (s *Server) Messages() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	r := &Request{Seq: int(s.seq.Add(1) - 1), Method: hr.Method, Path: hr.URL.Path, Body: body}
	var head struct {
		Stream   bool      `json:"stream"`
		Messages []Message `json:"messages"`
	}
	if json.Unmarshal(body, &head) == nil {
		r.Stream, r.Messages = head.Stream, head.Messages
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	if s.OnRequest != nil {
		s.OnRequest(r)
	}

	if hr.Method != http.MethodPost || r.Path != "/v1/messages" {
		apiError(w, http.StatusNotFound, "not_found_error", "fakeapi: no such endpoint: "+hr.Method+" "+r.Path)
		return
	}
	reply := s.script(r)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		apiError(w, reply.Status, "invalid_request_error", fmt.Sprintf("fakeapi: forced %d", reply.Status))
		return
	}
	blocks := make([]Block, len(reply.Blocks))
	copy(blocks, reply.Blocks)
	stop := reply.StopReason
	for i := range blocks {
		if blocks[i].Type == "tool_use" {
			if blocks[i].ID == "" {
				blocks[i].ID = fmt.Sprintf("toolu_fake%04d", s.ids.Add(1))
			}
			if stop == "" {
				stop = "tool_use"
			}
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	msgID := fmt.Sprintf("msg_fake%04d", r.Seq)
	if r.Stream {
		writeStream(w, msgID, model(body), blocks, stop)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model(body),
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage(),
	})
}

func model(body []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &m)
	if m.Model == "" {
		return "claude-fake"
	}
	return m.Model
}

func usage() map[string]int {
	return map[string]int{"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "error", "error": map[string]string{"type": typ, "message": msg},
	})
}

func writeStream(w http.ResponseWriter, id, model string, blocks []Block, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var buf bytes.Buffer
	event := func(name string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			panic(fmt.Sprintf("fakeapi: encode %s: %v", name, err))
		}
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, raw)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(),
	}})
	for i, b := range blocks {
		switch b.Type {
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			input := string(b.Input)
			if strings.TrimSpace(input) == "" {
				input = "{}"
			}
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": input}})
		default:
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b.Text}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
	_, _ = w.Write(buf.Bytes())
}
