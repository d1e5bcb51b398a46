package labserver

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"servelab/sim"
)

// Handler serves the OpenAI-compatible API, plus GET /servelab/stats (the
// server's own timing) and GET /health.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", s.auth(s.models))
	mux.HandleFunc("/v1/completions", s.auth(func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false) }))
	mux.HandleFunc("/v1/chat/completions", s.auth(func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true) }))
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/servelab/stats", s.auth(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats(r.URL.Query().Get("reset") == "1"))
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "NotFoundError", "", fmt.Sprintf("no route %s %s; this lab server serves /v1/models, /v1/completions and /v1/chat/completions", r.Method, r.URL.Path))
	})
	return mux
}

// apiError writes an OpenAI-style error body with the given status.
func apiError(w http.ResponseWriter, status int, typ, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var p any
	if param != "" {
		p = param
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": p, "code": status}})
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.APIKey != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.APIKey)) != 1 {
				apiError(w, http.StatusUnauthorized, "AuthenticationError", "", "missing or wrong API key (send Authorization: Bearer <key>)")
				return
			}
		}
		h(w, r)
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		apiError(w, http.StatusMethodNotAllowed, "BadRequestError", "", "use GET for /v1/models")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{{
		"id": s.cfg.ModelName, "object": "model", "created": s.started.Unix(), "owned_by": "servelab",
		"max_model_len": s.cfg.MaxModelLen}}})
}

// request is the part of a completions or chat request the lab server reads.
type request struct {
	Model               string            `json:"model"`
	Prompt              json.RawMessage   `json:"prompt"`
	Messages            []json.RawMessage `json:"messages"`
	MaxTokens           *float64          `json:"max_tokens"`
	MaxCompletionTokens *float64          `json:"max_completion_tokens"`
	Stream              bool              `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	IgnoreEOS bool     `json:"ignore_eos"`
	N         *float64 `json:"n"`

	blocks []uint64 // the prompt's block names (prefix caching)
}

// wordHashes is a prompt's content as the lab server counts it: one hash
// per word (or token id), in order.
type wordHashes struct{ h []uint64 }

// word adds one word.
func (c *wordHashes) word(w string) {
	if c != nil {
		f := fnv.New64a()
		f.Write([]byte(w))
		c.h = append(c.h, f.Sum64())
	}
}

// blocks names the full blocks of a prompt of this many tokens, its
// tokens laid over its words evenly (TokensPerWord), as
// sim.Request.Blocks: a prompt that repeats another's first words gets
// the same names for the blocks they fill.
func (c *wordHashes) blocks(tokens int) []uint64 {
	if len(c.h) == 0 {
		return nil
	}
	segs := make([]sim.Segment, 0, len(c.h))
	for i, h := range c.h {
		// word i's tokens: from its share of the prompt to the next word's
		from, to := i*tokens/len(c.h), (i+1)*tokens/len(c.h)
		if to > from {
			segs = append(segs, sim.Segment{ID: h, Tokens: to - from})
		}
	}
	return sim.ChainHashes(segs, sim.HashBlockTokens)
}

// badRequest is a validation failure with the parameter it concerns.
type badRequest struct{ param, msg string }

func (e *badRequest) Error() string { return e.msg }

// parse reads and checks a generation request, returning it with its
// prompt length in tokens; with prefix caching on, req.blocks names the
// prompt's content (promptBlocks).
func (s *Server) parse(w http.ResponseWriter, r *http.Request, chat bool) (*request, int, int, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, 0, 0, fmt.Errorf("request body larger than %d bytes (the lab server's limit for a %d-token context): %w", s.cfg.MaxBodyBytes, s.cfg.MaxModelLen, err)
		}
		return nil, 0, 0, fmt.Errorf("reading the request body: %w", err)
	}
	var req request
	if err := decodeExact(data, &req); err != nil {
		var bad *badRequest
		if errors.As(err, &bad) {
			return nil, 0, 0, bad
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, 0, 0, &badRequest{te.Field, fmt.Sprintf("%s: wrong type (got JSON %s)", te.Field, te.Value)}
		}
		return nil, 0, 0, &badRequest{"", "request body is not valid JSON: " + err.Error()}
	}
	if req.N != nil && *req.N != 1 {
		return nil, 0, 0, &badRequest{"n", "only n=1 is supported"}
	}
	var words float64
	var content *wordHashes
	if s.cfg.Engine.Limits.PrefixCaching {
		content = &wordHashes{}
	}
	if chat {
		if len(req.Messages) == 0 {
			return nil, 0, 0, &badRequest{"messages", "messages must be a non-empty list"}
		}
		for i, m := range req.Messages {
			n, err := messageWords(m, content)
			if err != nil {
				return nil, 0, 0, &badRequest{"messages", fmt.Sprintf("messages[%d]: %v", i, err)}
			}
			words += n
		}
	} else {
		n, err := promptWords(req.Prompt, content)
		if err != nil {
			return nil, 0, 0, &badRequest{"prompt", err.Error()}
		}
		words = n
	}
	prompt := int(math.Ceil(words * s.cfg.TokensPerWord))
	if content != nil {
		req.blocks = content.blocks(prompt)
	}
	if prompt < 1 {
		return nil, 0, 0, &badRequest{"prompt", "the prompt is empty"}
	}
	maxTok := float64(defaultComp)
	if chat {
		maxTok = defaultChat
	}
	param := "max_tokens"
	if req.MaxCompletionTokens != nil {
		maxTok, param = *req.MaxCompletionTokens, "max_completion_tokens"
	}
	if req.MaxTokens != nil {
		maxTok, param = *req.MaxTokens, "max_tokens"
	}
	if maxTok != math.Trunc(maxTok) || maxTok < 1 || maxTok > maxTokens {
		return nil, 0, 0, &badRequest{param, fmt.Sprintf("%s must be an integer in 1..%d, got %g", param, maxTokens, maxTok)}
	}
	output := int(maxTok)
	if prompt > maxTokens || prompt+output > s.cfg.MaxModelLen {
		what := "prompt"
		if chat {
			what = "messages"
		}
		return nil, 0, 0, &badRequest{"", fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the %s, %d in the completion). Please reduce the length of the %s or completion.",
			s.cfg.MaxModelLen, prompt+output, prompt, what, output, what)}
	}
	if s.cfg.NaturalLen > 0 && !req.IgnoreEOS && output > s.cfg.NaturalLen {
		output = s.cfg.NaturalLen
	}
	return &req, prompt, output, nil
}

// promptWords counts a completions prompt: a string, a list of one string,
// or a list of token ids.
func promptWords(raw json.RawMessage, content *wordHashes) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("prompt is required")
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return countWords(str, content), nil
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		if len(strs) != 1 {
			return 0, fmt.Errorf("a list prompt must hold exactly one string (batches are not supported), got %d", len(strs))
		}
		return countWords(strs[0], content), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		for _, id := range ids {
			content.word(strconv.FormatInt(id, 10))
		}
		return float64(len(ids)), nil
	}
	return 0, errors.New("prompt must be a string, a list of one string, or a list of token ids")
}

// messageWords counts one chat message's content: a string or text parts
// (its role is part of the content a cache names).
func messageWords(raw json.RawMessage, content *wordHashes) (float64, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := decodeExact(raw, &m); err != nil {
		var bad *badRequest
		if errors.As(err, &bad) {
			return 0, bad
		}
		return 0, errors.New("want an object with role and content")
	}
	if m.Role == "" {
		return 0, errors.New("role is required")
	}
	content.word("\x00" + m.Role) // (not a word of the text: counted as none)
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return 0, nil
	}
	var str string
	if json.Unmarshal(m.Content, &str) == nil {
		return countWords(str, content), nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return 0, errors.New("content must be a string or a list of text parts")
	}
	var n float64
	for _, p := range parts {
		n += countWords(p.Text, content)
	}
	return n, nil
}

// countWords counts s's whitespace-separated words, adding each to
// content (when not nil).
func countWords(s string, content *wordHashes) float64 {
	if content != nil {
		fs := strings.Fields(s)
		for _, w := range fs {
			content.word(w)
		}
		return float64(len(fs))
	}
	n, in := 0, false
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return float64(n)
}

// generate serves /v1/completions and /v1/chat/completions.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	if r.Method != http.MethodPost {
		apiError(w, http.StatusMethodNotAllowed, "BadRequestError", "", "use POST")
		return
	}
	req, prompt, output, err := s.parse(w, r, chat)
	if err != nil {
		var bad *badRequest
		switch {
		case errors.As(err, &bad):
			apiError(w, http.StatusBadRequest, "BadRequestError", bad.param, bad.msg)
		case strings.Contains(err.Error(), "larger than"):
			apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", "", err.Error())
		default:
			apiError(w, http.StatusBadRequest, "BadRequestError", "", err.Error())
		}
		return
	}
	if req.Model != "" && req.Model != s.cfg.ModelName {
		apiError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	id := int(s.nextID.Add(1))
	o := &response{w: w, rc: http.NewResponseController(w), stream: req.Stream, interval: s.cfg.StreamInterval,
		f: frames{chat: chat, model: s.model, created: time.Now().Unix(), prompt: prompt, maxTokens: output, requested: output}}
	if s.cfg.Cadence > 0 {
		o.f.stamp = s.started
	}
	if req.MaxTokens != nil {
		o.f.requested = int(*req.MaxTokens)
	} else if req.MaxCompletionTokens != nil {
		o.f.requested = int(*req.MaxCompletionTokens)
	}
	if chat {
		o.f.id = "chatcmpl-lab-" + strconv.Itoa(id)
	} else {
		o.f.id = "cmpl-lab-" + strconv.Itoa(id)
	}
	if req.StreamOptions != nil {
		o.usage, o.cont = req.StreamOptions.IncludeUsage, req.StreamOptions.ContinuousUsageStats
	}
	o.f.details = s.cfg.Engine.Limits.PrefixCaching
	st := &stream{id: id, prompt: prompt, output: output, blocks: req.blocks, finished: make(chan struct{}), out: o}
	if req.Stream {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // proxies (nginx) must not buffer the stream
		w.WriteHeader(http.StatusOK)
		if o.rc.Flush() != nil {
			return
		}
	}
	if err := s.enqueue(st); err != nil {
		if req.Stream {
			o.fail(err.Error())
		} else {
			apiError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", err.Error())
		}
		return
	}
	s.active.Add(1)
	defer s.active.Add(-1)
	// From here the writers own the response; the handler only waits.
	stopped := false
	select {
	case <-st.finished:
	case <-r.Context().Done():
		st.left.Store(true)
		select {
		case s.gone <- st.id:
		default: // the driver still sees left at the stream's next token
		}
	case <-s.stopped:
		stopped = true
	}
	st.mu.Lock()
	if !st.over {
		st.over = true
		if stopped {
			o.fail("the lab server is shutting down")
		}
	}
	st.mu.Unlock()
}

// response is one answer as the writers produce it: the SSE frames of a
// stream, or the whole answer at the end.
type response struct {
	w                 http.ResponseWriter
	rc                *http.ResponseController
	f                 frames
	stream            bool
	usage, cont       bool // stream_options: include_usage, continuous_usage_stats
	interval          int  // tokens per frame
	done, pending     int  // tokens written, tokens waiting for a full frame
	text              []byte
	buf               []byte
	lastAt, lastWrite time.Time // the previous frame: the simulator's time and when it was written
	deadline          time.Time // the write deadline now set on the connection
}

// tokens adds n tokens, writing a frame when one is due (the first token at
// once, then every interval tokens, and the last). It reports whether a
// frame was written and whether the client is still there.
func (o *response) tokens(n int, last bool) (wrote, ok bool) {
	if !o.stream {
		for i := 0; i < n; i++ {
			o.text = append(o.text, tokenText(o.done)...)
			o.done++
		}
		if last {
			o.whole()
		}
		return false, true
	}
	o.pending += n
	if !(last || o.done == 0 || o.pending >= o.interval) {
		return false, true
	}
	b := o.buf[:0]
	if o.f.chat && o.done == 0 {
		b = o.f.roleFrame(b)
	}
	o.done += o.pending
	b = o.f.tokenFrame(b, o.done-o.pending, o.pending, last, o.cont)
	o.pending = 0
	if last {
		if o.usage {
			b = o.f.usageFrame(b, o.done)
		}
		b = append(b, "data: [DONE]\n\n"...)
	}
	o.buf = b
	// Renewing the deadline costs a timer update; once a quarter of the
	// allowance is enough.
	if now := time.Now(); now.After(o.deadline.Add(-writeWait * 3 / 4)) {
		o.deadline = now.Add(writeWait)
		_ = o.rc.SetWriteDeadline(o.deadline)
	}
	if _, err := o.w.Write(b); err != nil {
		return false, false
	}
	return true, o.rc.Flush() == nil
}

// fail ends the response with an error: a frame mid-stream, else an error body.
func (o *response) fail(msg string) {
	if !o.stream {
		apiError(o.w, http.StatusInternalServerError, "InternalServerError", "", msg)
		return
	}
	_ = o.rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := o.w.Write(o.f.errorFrame(nil, msg)); err == nil {
		_ = o.rc.Flush()
	}
}

// whole writes a non-streaming answer.
func (o *response) whole() {
	f := &o.f
	finish := f.finish()
	u := map[string]any{"prompt_tokens": f.prompt, "completion_tokens": o.done, "total_tokens": f.prompt + o.done}
	if f.details {
		u["prompt_tokens_details"] = map[string]int{"cached_tokens": int(f.cached.Load())}
	}
	var choice map[string]any
	obj := "text_completion"
	if f.chat {
		obj = "chat.completion"
		choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(o.text)}, "finish_reason": finish}
	} else {
		choice = map[string]any{"index": 0, "text": string(o.text), "logprobs": nil, "finish_reason": finish}
	}
	o.w.Header().Set("Content-Type", "application/json")
	_ = o.rc.SetWriteDeadline(time.Now().Add(writeWait))
	_ = json.NewEncoder(o.w).Encode(map[string]any{"id": f.id, "object": obj, "created": f.created,
		"model": json.RawMessage(f.model), "choices": []any{choice}, "usage": u})
}

// frames builds the SSE frames of one response by appending bytes: no
// reflection on the hot path, so a thousand streams stay cheap.
type frames struct {
	chat      bool
	id        string
	model     []byte
	created   int64
	prompt    int
	maxTokens int       // tokens this response will produce
	requested int       // max_tokens asked for
	stamp     time.Time // non-zero: each token frame carries "servelab_t", its send time in seconds since this
	// details: usage carries prompt_tokens_details.cached_tokens, the
	// prompt tokens the prefix cache served (set by the driver when the
	// prefill starts), as vLLM reports them with prefix caching.
	details bool
	cached  atomic.Int32
}

// finish is "length" when the response ran to max_tokens, "stop" when it ended early.
func (f *frames) finish() string {
	if f.maxTokens < f.requested {
		return "stop"
	}
	return "length"
}

func (f *frames) head(b []byte) []byte {
	b = append(b, `data: {"id":"`...)
	b = append(b, f.id...)
	if f.chat {
		b = append(b, `","object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `","object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, f.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, f.model...)
	return b
}

func (f *frames) appendUsage(b []byte, completion int) []byte {
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(f.prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(f.prompt+completion), 10)
	if f.details {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(f.cached.Load()), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// roleFrame is the chat API's role-only first chunk (no content).
func (f *frames) roleFrame(b []byte) []byte {
	b = f.head(b)
	return append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// tokenFrame carries tokens first..first+n-1.
func (f *frames) tokenFrame(b []byte, first, n int, last, usage bool) []byte {
	b = f.head(b)
	if f.chat {
		b = append(b, `,"choices":[{"index":0,"delta":{"content":"`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"`...)
	}
	for i := first; i < first+n; i++ {
		b = append(b, tokenText(i)...)
	}
	if f.chat {
		b = append(b, '"', '}')
	} else {
		b = append(b, `","logprobs":null`...)
	}
	b = append(b, `,"finish_reason":`...)
	if last {
		b = append(b, '"')
		b = append(b, f.finish()...)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, "}]"...)
	if usage {
		b = f.appendUsage(b, first+n)
	}
	if !f.stamp.IsZero() {
		// Taken last, just before the write: the self-test's ground truth.
		b = append(b, `,"servelab_t":`...)
		b = strconv.AppendFloat(b, time.Since(f.stamp).Seconds(), 'f', 9, 64)
	}
	return append(b, "}\n\n"...)
}

// usageFrame is the final usage-only chunk (stream_options.include_usage).
func (f *frames) usageFrame(b []byte, completion int) []byte {
	b = f.head(b)
	b = append(b, `,"choices":[]`...)
	b = f.appendUsage(b, completion)
	return append(b, "}\n\n"...)
}

// errorFrame is a mid-stream error, as vLLM sends one.
func (f *frames) errorFrame(b []byte, msg string) []byte {
	b = append(b, `data: {"error":{"message":`...)
	b = append(b, quoteJSON(msg)...)
	return append(b, `,"type":"InternalServerError","param":null,"code":500}}`+"\n\n"...)
}

// vocabulary is the lab server's output text: plain words, so every token is one.
var vocabulary = []string{" the", " lab", " server", " streams", " one", " token", " per", " step", " and",
	" a", " long", " prompt", " stalls", " every", " other", " stream"}

func tokenText(i int) string { return vocabulary[i%len(vocabulary)] }

func quoteJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return bytes.Clone(b)
}
