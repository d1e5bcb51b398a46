// Package companion is the API of `servelab serve`: it serves the site and
// runs lab measurements (package labclient) against configured lab servers
// only, relaying every token arrival to the page as it happens.
//
// # Security
//
// The server binds loopback by default. Every request, site included, must
// carry a Host from the allow-list (DNS rebinding). Every API request must
// also, when it has an Origin, carry an Origin from the allow-list (never
// "*"; WebSockets and simple POSTs have no CORS protection of their own),
// and without one must not be a browser's cross-site request. The site (the
// page and its assets) has no Origin check, so that any page can embed it
// in an iframe ("Embed this view" in a slide deck). Measurements reach only the
// configured lab servers, named by their name: this is not a proxy. API keys
// for the lab servers come from the environment and never appear in an
// answer. CheckHost, CheckOrigin and Guard are exported for other servers.
//
// # API
//
// Errors are {"error": {"message": "...", "type": "...", "code": "..."}}
// with a fitting status (400 bad input, 403 refused, 404 unknown, 409 busy).
//
//	GET  /api/health
//	     {"ok": true, "mode": "companion", "labs": [{"name": "chunked", "kind": "embedded",
//	      "description": "..."}, ...], "default_lab": "chunked", "defaults": {run.py's flags},
//	      "running": "<run id or empty>", "limits": {"max_duration": 600, ...}}
//	     The page probes this to turn its live mode on.
//	GET  /api/labs
//	     The same "labs" list. Lab server URLs are loopback or configured by the
//	     user; keys never appear.
//	POST /api/measure
//	     Body: run.py's flags as JSON, snake_case, every field optional:
//	     {"lab": "prefill-first", "label": "unchunked", "api": "completions",
//	      "short_concurrency": 16, "short_input_len": 128, "short_output_len": 256,
//	      "long_input_len": 32000, "long_output_len": 16, "long_count": 1,
//	      "duration": 60, "inject_after": 20, "warmup": 2, "ignore_eos": true,
//	      "timeout": 900, "seed": 0, "model": ""}
//	     "lab" picks a configured lab by name (default: the first). "base_url",
//	     "host" and "port" are accepted only when they name a configured lab
//	     (else 403, code "target_not_allowed"). One measurement runs at a time
//	     (409 while busy).
//	     202 {"id": "...", "lab": "...", "events": "/api/runs/ID/events", "result": "/api/runs/ID"}
//	GET  /api/runs
//	     [{"id", "label", "lab", "state": "running"|"done"|"interrupted"|"failed",
//	       "started": RFC 3339, "error"?, "summary"?: {run.py's summary keys}}], newest first,
//	     including runs saved by earlier sessions.
//	GET  /api/runs/{id}
//	     200: the measured JSON ({"config", "summary", "gaps", "servelab": {frames,
//	     requests, warnings, interrupted}}), exactly what `servelab measure --json`
//	     writes and run.py --compare reads. 202 {"id", "state": "running"} while
//	     it runs; 502 with an error when the run failed before measuring anything.
//	DELETE /api/runs/{id}
//	     Stops a running measurement (like Ctrl-C): what was measured is saved.
//	GET  /api/runs/{id}/events
//	     text/event-stream, replayed from the start for late subscribers, then live;
//	     every message has an id, and a reconnecting EventSource (Last-Event-ID)
//	     resumes where it left off:
//	       event: phase     data: {"type":"phase","phase":"warmup"|"load"|"inject"|"done","t":s}
//	       event: tokens    data: [{"type":"token","t":s,"stream":i,"long":bool,"gap":s,"tokens":n}, ...]
//	                        every token frame of every stream, in batches about every 50 ms;
//	                        t is seconds since the load started, gap 0 on a stream's first frame
//	       event: request   data: {"type":"request","t":s,"stream":i,"long":bool,"ok":bool,"error":"..."}
//	       event: progress  data: {"type":"progress","t":s,"frames":n,"done":n,"failed":n,"worst":s}
//	       event: summary   data: run.py's summary ({"label", ..., "output_tok_s"}), once, at the end
//	       event: error     data: {"message": "..."} when the run failed or stopped early
//	       event: end       data: {"id": "...", "state": "..."}; the stream then closes
//
// Everything outside /api is the site (package site).
package companion

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"servelab/cmd/internal/labclient"
	"servelab/sim/lab"
)

// Lab is a lab server measurements may target.
type Lab struct {
	Name        string `json:"name"`
	BaseURL     string `json:"-"`    // kept from the page: it needs only the name
	APIKey      string `json:"-"`    // from the environment; never sent to the page
	Kind        string `json:"kind"` // "embedded" or "external"
	Description string `json:"description,omitempty"`
}

// Limits bound what the page may ask for.
type Limits struct {
	MaxDuration    float64 `json:"max_duration"`     // seconds of load
	MaxConcurrency int     `json:"max_concurrency"`  // short streams
	MaxInputLen    int     `json:"max_input_len"`    // tokens per prompt
	MaxOutputLen   int     `json:"max_output_len"`   // max_tokens
	MaxLongCount   int     `json:"max_long_count"`   // long prompts at once
	MaxTimeout     float64 `json:"max_timeout"`      // per-request timeout
	MaxWarmup      int     `json:"max_warmup"`       //
	MaxSavedEvents int     `json:"max_saved_events"` // token events kept for replay per run
}

// DefaultLimits are generous for a lab, small enough that no page can tie up the machine for long.
var DefaultLimits = Limits{MaxDuration: 600, MaxConcurrency: 1024, MaxInputLen: 1 << 20, MaxOutputLen: 1 << 16,
	MaxLongCount: 64, MaxTimeout: 3600, MaxWarmup: 100, MaxSavedEvents: 4 << 20}

// Config is a companion's setup.
type Config struct {
	Labs           []Lab        // measurement targets; the first is the default. Required.
	RunsDir        string       // where finished runs are saved as measured JSON; "" keeps them in memory
	AllowedHosts   []string     // Host header values accepted (see LoopbackHosts). Required.
	AllowedOrigins []string     // Origin values accepted (see LoopbackOrigins); "*" is refused
	Site           http.Handler // serves everything outside /api; nil: 404
	Limits         Limits       // zero: DefaultLimits
	Log            io.Writer    // one line per run started and finished; nil: none
}

// Server is a running companion. Make one with New; Close stops any measurement.
type Server struct {
	cfg    Config
	mu     sync.Mutex
	runs   map[string]*run
	saved  []string // finished runs also on disk, oldest first (see forget)
	active *run
	ctx    context.Context
	cancel context.CancelFunc

	listMu sync.Mutex           // one directory scan at a time
	listed map[string]savedInfo // by file name: what a saved run's file said, while it is unchanged
}

// savedInfo is a saved run's entry in the list, read from its file once
// and kept while the file's size and modification time stay the same
// (reading every file on every call took seconds for a few hundred MB).
type savedInfo struct {
	size int64
	mod  time.Time
	info runInfo
}

// New checks cfg.
func New(cfg Config) (*Server, error) {
	if len(cfg.Labs) == 0 {
		return nil, errors.New("companion: no lab server configured")
	}
	seen := map[string]bool{}
	for _, l := range cfg.Labs {
		if l.Name == "" || seen[l.Name] || !validName(l.Name) {
			return nil, fmt.Errorf("companion: lab names must be unique words of letters, digits, '-', '_' and '.', got %q", l.Name)
		}
		seen[l.Name] = true
		if u, err := url.Parse(l.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("companion: lab %q needs an http(s) base URL", l.Name)
		}
	}
	if len(cfg.AllowedHosts) == 0 {
		return nil, errors.New("companion: no allowed Host values")
	}
	if slices.Contains(cfg.AllowedOrigins, "*") {
		return nil, errors.New("companion: \"*\" is not an allowed origin; name each origin")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if cfg.RunsDir != "" {
		if err := os.MkdirAll(cfg.RunsDir, 0o755); err != nil {
			return nil, fmt.Errorf("companion: runs directory: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, runs: map[string]*run{}, ctx: ctx, cancel: cancel}, nil
}

// validName reports whether a lab's name is 1-64 of [A-Za-z0-9._-].
// (Plain loops, not regexps: compiling those at start-up cost every
// servelab command a third of a millisecond.)
func validName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validID reports whether a saved run's ID is YYYYMMDD-HHMMSS-xxxxxx
// (digits, digits, lower-case hex).
func validID(s string) bool {
	if len(s) != 22 || s[8] != '-' || s[15] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 15:
		case i < 15 && '0' <= c && c <= '9':
		case i > 15 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// Close stops a running measurement (its partial results are saved) and waits for it.
func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	a := s.active
	s.mu.Unlock()
	if a != nil {
		<-a.finished
	}
}

// Handler is the whole server: the API under /api/, behind the Host and
// Origin guard, and the site everywhere else, behind the Host check only, so
// that a page of any origin (a slide deck from disk or another site) can
// embed the page and load its assets.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", s.health)
	mux.HandleFunc("GET /api/labs", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.cfg.Labs) })
	mux.HandleFunc("POST /api/measure", s.measure)
	mux.HandleFunc("GET /api/runs", s.list)
	mux.HandleFunc("GET /api/runs/{id}", s.get)
	mux.HandleFunc("DELETE /api/runs/{id}", s.stop)
	mux.HandleFunc("GET /api/runs/{id}/events", s.events)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no API route %s %s", r.Method, clip(r.URL.Path, 80)))
	})
	site := s.cfg.Site
	if site == nil {
		site = http.NotFoundHandler()
	}
	api := OriginGuard(mux, s.cfg.AllowedOrigins)
	top := http.NewServeMux()
	top.Handle("/api/", api)
	top.Handle("/api", api)
	top.Handle("/", site)
	return HostGuard(top, s.cfg.AllowedHosts)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	running := ""
	if s.active != nil {
		running = s.active.id
	}
	s.mu.Unlock()
	d := lab.DefaultConfig()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "mode": "companion", "labs": s.cfg.Labs,
		"default_lab": s.cfg.Labs[0].Name, "running": running, "limits": s.cfg.Limits,
		"defaults": measureRequest{Config: d, Lab: s.cfg.Labs[0].Name}.public()})
}

// measureRequest is POST /api/measure's body: run.py's flags plus the lab's name.
type measureRequest struct {
	lab.Config
	Lab string `json:"lab"`
}

// public is the request without the fields the server decides.
func (m measureRequest) public() map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	for _, k := range []string{"base_url", "host", "port", "json"} {
		delete(out, k)
	}
	return out
}

// requestError is a refusal with its status and code.
type requestError struct {
	status int
	code   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// maxMeasureBody bounds a measurement request's body.
const maxMeasureBody = 64 << 10

// flagName is a command-line flag in labclient's messages (--inject-after),
// which the API names as its field (inject_after); a minus sign is not one.
var flagName = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// parseMeasure reads and checks a measurement request against the labs and limits.
func (s *Server) parseMeasure(r *http.Request) (labclient.Options, Lab, *requestError) {
	bad := func(status int, code, format string, a ...any) (labclient.Options, Lab, *requestError) {
		return labclient.Options{}, Lab{}, &requestError{status, code, fmt.Sprintf(format, a...)}
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxMeasureBody))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			return bad(http.StatusRequestEntityTooLarge, "request_too_large", "the body is over %d bytes: a measurement request is run.py's flags, a few hundred bytes", maxMeasureBody)
		}
		return bad(http.StatusBadRequest, "invalid_json", "the body must be a JSON object of run.py's flags")
	}
	req := measureRequest{Config: lab.DefaultConfig()}
	known := map[string]bool{"lab": true}
	for _, k := range strings.Split("base_url host port api model label short_concurrency short_input_len short_output_len long_input_len long_output_len long_count duration inject_after warmup ignore_eos timeout json seed", " ") {
		known[k] = true
	}
	for k := range raw {
		if !known[k] {
			return bad(http.StatusBadRequest, "invalid_request", "unknown field %q; the fields are run.py's flags in snake_case plus \"lab\"", clip(k, 40))
		}
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return bad(http.StatusBadRequest, "invalid_request", "%s: wrong type (got JSON %s)", te.Field, te.Value)
		}
		return bad(http.StatusBadRequest, "invalid_json", "%v", err)
	}
	if _, ok := raw["json"]; ok {
		return bad(http.StatusBadRequest, "invalid_request", "json: the companion saves every run itself (see /api/runs)")
	}
	// Pick the lab by name; a URL is accepted only when it is a configured lab's.
	var lab *Lab
	if req.Lab != "" {
		for i := range s.cfg.Labs {
			if s.cfg.Labs[i].Name == req.Lab {
				lab = &s.cfg.Labs[i]
			}
		}
		if lab == nil {
			return bad(http.StatusForbidden, "target_not_allowed", "lab %q is not one of this companion's lab servers (see /api/labs)", clip(req.Lab, 64))
		}
	}
	_, hasURL := raw["base_url"]
	_, hasHost := raw["host"]
	_, hasPort := raw["port"]
	if hasURL || hasHost || hasPort {
		target := req.BaseURL
		if !hasURL {
			target = fmt.Sprintf("http://%s:%d", req.Host, req.Port)
		}
		var match *Lab
		for i := range s.cfg.Labs {
			if sameURL(target, s.cfg.Labs[i].BaseURL) {
				match = &s.cfg.Labs[i]
			}
		}
		if match == nil || (lab != nil && match != lab) {
			return bad(http.StatusForbidden, "target_not_allowed", "measurements go only to this companion's configured lab servers, by name; %q is not one", clip(target, 100))
		}
		lab = match
	}
	if lab == nil {
		lab = &s.cfg.Labs[0]
	}
	c := req.Config
	c.BaseURL = strings.TrimRight(lab.BaseURL, "/")
	if u, err := url.Parse(c.BaseURL); err == nil {
		c.Host = u.Hostname()
		if p := u.Port(); p != "" {
			fmt.Sscan(p, &c.Port)
		}
	}
	c.JSON = ""
	l := s.cfg.Limits
	for _, f := range []struct {
		name   string
		v, max float64
	}{
		{"duration", c.Duration, l.MaxDuration}, {"short_concurrency", float64(c.ShortConcurrency), float64(l.MaxConcurrency)},
		{"short_input_len", float64(c.ShortInputLen), float64(l.MaxInputLen)}, {"long_input_len", float64(c.LongInputLen), float64(l.MaxInputLen)},
		{"short_output_len", float64(c.ShortOutputLen), float64(l.MaxOutputLen)}, {"long_output_len", float64(c.LongOutputLen), float64(l.MaxOutputLen)},
		{"long_count", float64(c.LongCount), float64(l.MaxLongCount)}, {"timeout", c.Timeout, l.MaxTimeout},
		{"warmup", float64(c.Warmup), float64(l.MaxWarmup)},
	} {
		if f.v > f.max {
			return bad(http.StatusBadRequest, "limit_exceeded", "%s: %g is over this companion's limit of %g", f.name, f.v, f.max)
		}
	}
	o := labclient.Options{Config: c, APIKey: lab.APIKey, StreamUsage: true, RawFrames: true}
	if err := o.Validate(); err != nil {
		msg := flagName.ReplaceAllStringFunc(err.Error(), func(f string) string { return strings.ReplaceAll(f[2:], "-", "_") })
		return bad(http.StatusBadRequest, "invalid_request", "%s", msg)
	}
	return o, *lab, nil
}

// sameURL compares two base URLs by scheme, host and port, without case.
func sameURL(a, b string) bool {
	ua, err1 := url.Parse(strings.TrimRight(a, "/"))
	ub, err2 := url.Parse(strings.TrimRight(b, "/"))
	if err1 != nil || err2 != nil {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) &&
		port(ua) == port(ub) && strings.TrimRight(ua.Path, "/") == strings.TrimRight(ub.Path, "/")
}

func (s *Server) measure(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as application/json")
		return
	}
	o, lab, e := s.parseMeasure(r)
	if e != nil {
		writeError(w, e.status, e.code, e.msg)
		return
	}
	s.mu.Lock()
	if s.active != nil {
		id := s.active.id
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "busy", "measurement "+id+" is still running; one at a time, or the runs would disturb each other")
		return
	}
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "closing", "the companion is shutting down")
		return
	}
	ru := newRun(newID(), o.Label, lab.Name, s.cfg.Limits.MaxSavedEvents)
	ctx, cancel := context.WithCancel(s.ctx)
	ru.cancel = cancel
	s.runs[ru.id] = ru
	s.active = ru
	s.mu.Unlock()
	go s.execute(ctx, ru, o)
	writeJSON(w, http.StatusAccepted, map[string]string{"id": ru.id, "lab": lab.Name,
		"events": "/api/runs/" + ru.id + "/events", "result": "/api/runs/" + ru.id})
}

func newID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// execute runs one measurement and saves it.
func (s *Server) execute(ctx context.Context, ru *run, o labclient.Options) {
	defer close(ru.finished)
	defer func() {
		s.mu.Lock()
		s.active = nil
		s.mu.Unlock()
	}()
	defer ru.cancel()
	s.logf("run %s: measuring lab %s (%s)\n", ru.id, ru.lab, o.Label)
	o.Observer = ru.add
	res, err := labclient.Measure(ctx, o)
	if err != nil {
		ru.finish("failed", err.Error(), nil)
		s.logf("run %s failed: %v\n", ru.id, err)
		return
	}
	state, msg := "done", ""
	if res.Interrupted {
		state, msg = "interrupted", "stopped early: "+fmt.Sprint(res.Stop)
	}
	if all, example := res.AllFailed(); all {
		state, msg = "failed", strings.TrimPrefix(msg+"; ", "; ")+"every request failed, so nothing was measured (e.g. "+example+")"
	}
	saved := false
	path := filepath.Join(s.cfg.RunsDir, ru.id+".json")
	if s.cfg.RunsDir != "" {
		if err := labclient.SaveMeasured(path, res.Measured); err != nil {
			msg = strings.TrimPrefix(msg+"; ", "; ") + "could not save the run: " + err.Error()
		} else {
			saved = true
		}
	}
	ru.finish(state, msg, res.Measured)
	if st, err := os.Stat(path); saved && err == nil {
		// The list knows this file already: it need never read it back.
		s.listMu.Lock()
		if s.listed == nil {
			s.listed = map[string]savedInfo{}
		}
		s.listed[filepath.Base(path)] = savedInfo{size: st.Size(), mod: st.ModTime(), info: ru.info()}
		s.listMu.Unlock()
	}
	s.logf("run %s %s: worst gap %.1f ms\n", ru.id, state, res.Measured.Summary.WorstGap*1e3)
	if saved {
		s.forget(ru.id, keepInMemory)
	}
}

// keepInMemory is how many finished, saved runs stay in memory with their
// token events (up to MaxSavedEvents each) for pages that replay them.
const keepInMemory = 4

// forget queues the saved run id and drops the oldest saved runs beyond
// keep from memory; lookup then finds them on disk, whole.
func (s *Server) forget(id string, keep int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved = append(s.saved, id)
	for len(s.saved) > keep {
		delete(s.runs, s.saved[0])
		s.saved = s.saved[1:]
	}
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, format, a...)
	}
}

// runInfo is one entry of GET /api/runs.
type runInfo struct {
	ID      string       `json:"id"`
	Label   string       `json:"label"`
	Lab     string       `json:"lab,omitempty"`
	State   string       `json:"state"`
	Started time.Time    `json:"started"`
	Error   string       `json:"error,omitempty"`
	Summary *lab.Summary `json:"summary,omitempty"`
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	out := map[string]runInfo{}
	if s.cfg.RunsDir != "" {
		for id, info := range s.savedRuns() {
			out[id] = info
		}
	}
	s.mu.Lock()
	for id, ru := range s.runs {
		out[id] = ru.info()
	}
	s.mu.Unlock()
	list := make([]runInfo, 0, len(out))
	for _, v := range out {
		list = append(list, v)
	}
	slices.SortFunc(list, func(a, b runInfo) int { return strings.Compare(b.ID, a.ID) })
	writeJSON(w, http.StatusOK, list)
}

// savedRuns lists the runs saved in RunsDir, reading only files that are
// new or changed since the last call.
func (s *Server) savedRuns() map[string]runInfo {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	entries, _ := os.ReadDir(s.cfg.RunsDir)
	fresh := make(map[string]savedInfo, len(entries))
	out := make(map[string]runInfo, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID(id) || !e.Type().IsRegular() {
			continue
		}
		st, err := e.Info()
		if err != nil {
			continue
		}
		c, ok := s.listed[e.Name()]
		if !ok || c.size != st.Size() || !c.mod.Equal(st.ModTime()) {
			c = savedInfo{size: st.Size(), mod: st.ModTime(), info: readSavedInfo(filepath.Join(s.cfg.RunsDir, e.Name()), id)}
		}
		fresh[e.Name()] = c
		out[id] = c.info
	}
	s.listed = fresh // files gone from the directory leave the cache
	return out
}

// readSavedInfo is the list entry for the saved run id in file path.
func readSavedInfo(path, id string) runInfo {
	info := runInfo{ID: id, State: "done"}
	if t, err := time.Parse("20060102-150405", id[:15]); err == nil {
		info.Started = t
	}
	m, err := readMeasuredFile(path)
	if err != nil {
		info.State, info.Error = "failed", err.Error()
		return info
	}
	info.Label, info.Summary = m.Summary.Label, &m.Summary
	if m.Extra != nil && m.Extra.Interrupted {
		info.State = "interrupted"
	}
	return info
}

func readMeasuredFile(path string) (*lab.Measured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return lab.Read(f)
}

// lookup finds a run by id: in memory, or saved by an earlier session.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*run, string, bool) {
	id := r.PathValue("id")
	if !validID(id) {
		writeError(w, http.StatusNotFound, "not_found", "no run "+clip(id, 40))
		return nil, "", false
	}
	s.mu.Lock()
	ru := s.runs[id]
	s.mu.Unlock()
	if ru != nil {
		return ru, id, true
	}
	if s.cfg.RunsDir != "" {
		if _, err := os.Stat(filepath.Join(s.cfg.RunsDir, id+".json")); err == nil {
			return nil, id, true
		}
	}
	writeError(w, http.StatusNotFound, "not_found", "no run "+id)
	return nil, "", false
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	ru, id, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if ru != nil {
		info, m := ru.result()
		switch {
		case info.State == "running":
			writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "state": "running"})
			return
		case m == nil:
			writeError(w, http.StatusBadGateway, "measurement_failed", info.Error)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = lab.Write(w, m)
		return
	}
	m, err := readMeasuredFile(filepath.Join(s.cfg.RunsDir, id+".json"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "unreadable", "saved run "+id+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = lab.Write(w, m)
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	ru, id, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if ru == nil || !ru.stop() {
		writeError(w, http.StatusConflict, "not_running", "run "+id+" is not running")
		return
	}
	<-ru.finished
	writeJSON(w, http.StatusOK, ru.info())
}

// events relays a run's events as SSE: everything so far, then live.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ru, id, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if ru == nil {
		writeError(w, http.StatusGone, "not_live", "run "+id+" was saved by an earlier session; fetch /api/runs/"+id)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	// A reconnecting EventSource says how far it got; carry on from there.
	ru.flush()
	off := 0
	if n, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && n > 0 {
		off = ru.offset(n)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ru.flush()
		chunk, next, done, info, sum := ru.view(off)
		off += len(chunk)
		// The shared log goes out as it is, in pieces: nothing is copied per subscriber.
		for len(chunk) > 0 {
			n := min(len(chunk), 1<<20)
			if _, err := w.Write(chunk[:n]); err != nil || rc.Flush() != nil {
				return
			}
			chunk = chunk[n:]
		}
		if done {
			var tail []byte
			if sum != nil {
				tail = appendSSE(tail, "summary", sum, next)
			}
			if info.Error != "" {
				tail = appendSSE(tail, "error", map[string]string{"message": info.Error}, next)
			}
			tail = appendSSE(tail, "end", map[string]string{"id": id, "state": info.State}, next)
			if _, err := w.Write(tail); err == nil {
				_ = rc.Flush()
			}
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// writeError answers in the OpenAI shape the proxy and lab servers use.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, status, map[string]any{"error": map[string]string{"message": msg, "type": typ, "code": code}})
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
