// Package proxy is the guard-railed relay from the public internet to one lab
// server: it checks a completion request against size and max_tokens limits,
// rate-limits each client, forwards it only to the configured upstream and
// relays the answer's SSE frames one by one as they arrive. It knows nothing
// of the platform: the Cloudflare Worker (cmd/worker) and a native server
// give it their own HTTP client, clock and rate-limit store.
package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxBodyBytes = 64 << 10
	DefaultMaxTokens    = 1024
	DefaultPerMinute    = 60
	DefaultBurst        = 20
	DefaultMaxDuration  = 5 * time.Minute
	DefaultMaxFrame     = 1 << 20
)

// Config is what a deployment decides.
type Config struct {
	// Upstream is the lab server's base URL (with or without /v1). Required.
	Upstream string
	// APIKey, if set, is sent to the lab server as a bearer token. It never
	// appears in an answer, and clients' own Authorization headers are dropped.
	APIKey string
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int64
	// MaxTokens bounds max_tokens (and max_completion_tokens); it is also the
	// value filled in when a request has none.
	MaxTokens int
	// Limiter rate-limits clients; nil means no rate limit.
	Limiter *Limiter
	// ClientKey names the client a request comes from, for Limiter.
	ClientKey func(*http.Request) string
	// Client sends the upstream requests. Required: NoRedirectClient natively,
	// the platform's fetch on Workers. It must not follow redirects, which
	// could lead anywhere but the configured server.
	Client Doer
	// MaxDuration bounds one upstream exchange, stream included.
	MaxDuration time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Doer sends one HTTP request. *http.Client is one; the worker's is a thin
// wrapper around the platform's fetch, which keeps Go's HTTP transport (and
// its TLS code) out of the worker's binary.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// NoRedirectClient returns an http.Client for native servers that hands a
// redirect back (the proxy answers it as a 502) rather than following it.
func NoRedirectClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// Proxy is an http.Handler for the /api routes. Make one with New.
type Proxy struct {
	cfg      Config
	upstream *url.URL
}

// routes maps each path the proxy answers to the lab server path it reaches.
// Only these reach the lab server; every other /api path is a 404.
var routes = map[string]route{
	"/api/v1/completions":      {path: "/v1/completions", method: http.MethodPost},
	"/api/v1/chat/completions": {path: "/v1/chat/completions", method: http.MethodPost, chat: true},
	"/api/v1/models":           {path: "/v1/models", method: http.MethodGet},
}

type route struct {
	path   string
	method string
	chat   bool
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == "" {
		return nil, errors.New("no lab server configured")
	}
	u, err := NormalizeUpstream(cfg.Upstream)
	if err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.ClientKey == nil {
		cfg.ClientKey = RemoteAddrKey
	}
	if cfg.Client == nil {
		// No default: a default would link Go's HTTP transport and TLS into
		// the worker, where they cannot run and cost about 1 MB.
		return nil, errors.New("proxy: no HTTP client configured")
	}
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = DefaultMaxDuration
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Proxy{cfg: cfg, upstream: u}, nil
}

// Info is what GET /api/info says about the proxy: its limits, never its
// upstream address or key. (There is deliberately no /api/health: the page
// takes that for `servelab serve`'s companion, whose measurement API the
// proxy does not offer.)
type Info struct {
	Proxy        string   `json:"proxy"`
	Routes       []string `json:"routes"`
	MaxBodyBytes int64    `json:"max_body_bytes"`
	MaxTokens    int      `json:"max_tokens"`
	RatePerMin   float64  `json:"rate_limit_per_minute,omitempty"`
	RateBurst    float64  `json:"rate_limit_burst,omitempty"`
}

func (p *Proxy) info() Info {
	in := Info{Proxy: "servelab", MaxBodyBytes: p.cfg.MaxBodyBytes, MaxTokens: p.cfg.MaxTokens}
	for path := range routes {
		in.Routes = append(in.Routes, path)
	}
	sort.Strings(in.Routes)
	if l := p.cfg.Limiter; l != nil {
		in.RatePerMin, in.RateBurst = l.Rate*60, l.Burst
	}
	return in
}

// ServeHTTP answers /api/info and the proxied routes.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e := checkOrigin(r); e != nil {
		writeRefusal(w, e)
		return
	}
	if r.URL.Path == "/api/info" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			WriteError(w, http.StatusMethodNotAllowed, CodeMethod, "use GET for "+r.URL.Path)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(p.info())
		return
	}
	rt, ok := routes[r.URL.Path]
	if !ok {
		WriteError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no API route %s (see /api/info)", clip(r.URL.Path, 80)))
		return
	}
	if r.Method != rt.method {
		w.Header().Set("Allow", rt.method)
		WriteError(w, http.StatusMethodNotAllowed, CodeMethod, fmt.Sprintf("use %s for %s", rt.method, r.URL.Path))
		return
	}
	if e := CheckNamedUpstream(r, p.upstream); e != nil {
		writeRefusal(w, e)
		return
	}
	// The rate limit comes before the body is read, so a refused client costs
	// little; every attempt counts, refused ones included.
	if l := p.cfg.Limiter; l != nil {
		if ok, wait := l.Allow(p.cfg.ClientKey(r), p.cfg.Now()); !ok {
			writeErrorDetail(w, http.StatusTooManyRequests, ErrorDetail{
				Code: CodeRateLimited, Message: fmt.Sprintf("too many requests from this client: at most %g a minute, bursts of %g", l.Rate*60, l.Burst),
				RetryAfter: retrySeconds(wait),
			})
			return
		}
	}
	var body []byte
	if rt.method == http.MethodPost {
		var e *RequestError
		if body, e = p.readBody(r); e == nil {
			body, e = ValidateCompletion(body, p.cfg.MaxTokens, rt.chat, p.upstream)
		}
		if e != nil {
			writeRefusal(w, e)
			return
		}
	}
	p.forward(w, r, rt, body)
}

// checkOrigin refuses browser requests from pages of another site: the
// proxy serves its own page, and nobody else's page should spend its budget.
func checkOrigin(r *http.Request) *RequestError {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	u, err := url.Parse(origin)
	if err != nil || !strings.EqualFold(u.Host, host) {
		return refuse(http.StatusForbidden, CodeOriginDenied, "requests from pages of another origin are not allowed")
	}
	return nil
}

func writeRefusal(w http.ResponseWriter, e *RequestError) {
	writeErrorDetail(w, e.Status, ErrorDetail{Code: e.Code, Message: e.Msg, Limit: e.Limit})
}

func (p *Proxy) readBody(r *http.Request) ([]byte, *RequestError) {
	max := p.cfg.MaxBodyBytes
	tooLarge := func() *RequestError {
		e := refuse(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request body is over this proxy's limit of %d bytes", max)
		e.Limit = max
		return e
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, refuse(http.StatusUnsupportedMediaType, CodeMediaType, "send the body as application/json, not %s", clip(ct, 60))
	}
	if r.ContentLength > max {
		return nil, tooLarge()
	}
	if r.Body == nil {
		return nil, refuse(http.StatusBadRequest, CodeBadJSON, "the request has no body")
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "reading the request body: %v", err)
	}
	if int64(len(b)) > max {
		return nil, tooLarge()
	}
	return b, nil
}

// forward sends the checked request to the lab server and relays its answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, rt route, body []byte) {
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.MaxDuration)
	defer cancel()
	u := *p.upstream
	u.Path += rt.path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, rt.method, u.String(), rd)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, CodeUpstreamDown, "could not build the lab server request")
		return
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = int64(len(body))
	}
	req.Header.Set("Accept", "text/event-stream, application/json")
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		// The error text may carry the upstream address: keep it out.
		WriteError(w, http.StatusBadGateway, CodeUpstreamDown, "the lab server could not be reached")
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.relayUpstreamError(w, resp)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("X-Accel-Buffering", "no") // proxies in front must not buffer the stream
		w.WriteHeader(http.StatusOK)
		if err := RelaySSE(w, resp.Body, DefaultMaxFrame); err != nil {
			// Headers are gone: say it in the stream, as lab servers do.
			writeSSEError(w, CodeStreamInterrupts, "the stream from the lab server broke off")
		}
		return
	}
	if ct == "" {
		ct = "application/json"
	}
	h.Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	io.Copy(w, io.LimitReader(resp.Body, 8<<20))
}

// relayUpstreamError turns a lab server's error answer into the proxy's own:
// its status if it blamed the request (4xx), 502 otherwise, and its message
// (clipped) but no other part of its answer.
func (p *Proxy) relayUpstreamError(w http.ResponseWriter, resp *http.Response) {
	status := http.StatusBadGateway
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		status = resp.StatusCode
	}
	msg := fmt.Sprintf("the lab server answered %d", resp.StatusCode)
	var eb struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if json.Unmarshal(raw, &eb) == nil {
		var detail struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(eb.Error, &detail) == nil && detail.Message != "":
			msg += ": " + clip(detail.Message, 300)
		case json.Unmarshal(eb.Error, &s) == nil && s != "":
			msg += ": " + clip(s, 300)
		case eb.Message != "":
			msg += ": " + clip(eb.Message, 300)
		}
	}
	if p.cfg.APIKey != "" {
		msg = strings.ReplaceAll(msg, p.cfg.APIKey, "[key]")
	}
	writeErrorDetail(w, status, ErrorDetail{Code: CodeUpstreamError, Message: msg, Type: "upstream_error"})
}

func writeSSEError(w http.ResponseWriter, code, msg string) {
	b, _ := json.Marshal(ErrorBody{Error: ErrorDetail{Message: msg, Type: "server_error", Code: code}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
