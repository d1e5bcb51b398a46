package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// RequestError is a request the proxy refuses, with the answer it gets.
type RequestError struct {
	Status int
	Code   string
	Msg    string
	Limit  int64
}

func (e *RequestError) Error() string { return e.Msg }

func refuse(status int, code, format string, args ...any) *RequestError {
	return &RequestError{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// upstreamFields are body fields, query parameters and (with an X- prefix)
// headers by which a client might try to name the server to talk to.
var upstreamFields = []string{"base_url", "upstream", "url", "api_base", "endpoint", "target", "lab_server"}

var upstreamHeaders = []string{"X-Upstream", "X-Lab-Server", "X-Base-Url", "X-Target-Url"}

// NormalizeUpstream checks a lab server base URL (http or https, a host, no
// credentials, query or fragment) and returns it without a trailing slash.
func NormalizeUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("lab server URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("lab server URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("lab server URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("lab server URL: put credentials in the API key setting, not in the URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("lab server URL %q: no query or fragment allowed", raw)
	}
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	// A lab client's base URL often ends in /v1; the routes add it themselves.
	u.Path = strings.TrimSuffix(u.Path, "/v1")
	return u, nil
}

// sameUpstream reports whether a client-named server is the configured one,
// so that a page which always sends its base URL still works.
func sameUpstream(named string, configured *url.URL) bool {
	u, err := NormalizeUpstream(named)
	return err == nil && u.String() == configured.String()
}

// CheckNamedUpstream refuses a request that names, in its query or headers,
// any server other than the configured one.
func CheckNamedUpstream(r *http.Request, configured *url.URL) *RequestError {
	q := r.URL.Query()
	for _, f := range upstreamFields {
		for _, v := range q[f] {
			if !sameUpstream(v, configured) {
				return refuse(http.StatusForbidden, CodeUpstreamDenied, "query parameter %q names another server: this proxy only reaches its configured lab server", f)
			}
		}
	}
	for _, h := range upstreamHeaders {
		for _, v := range r.Header.Values(h) {
			if !sameUpstream(v, configured) {
				return refuse(http.StatusForbidden, CodeUpstreamDenied, "header %s names another server: this proxy only reaches its configured lab server", h)
			}
		}
	}
	return nil
}

// ValidateCompletion checks a completion request body against the limits and
// returns the body to send upstream: the same fields, with max_tokens set to
// maxTokens when the client left it out (a lab server's default may be the
// whole context). chat says whether it is a chat request, which may use
// max_completion_tokens instead. Only the fields the lab's clients send are
// accepted (completionFields, chatFields) and only one prompt (a string, or
// one list of string messages): a list of prompts is a batch, answered with
// one choice per prompt, which would multiply max_tokens past the limit.
func ValidateCompletion(body []byte, maxTokens int, chat bool, configured *url.URL) ([]byte, *RequestError) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, refuse(http.StatusBadRequest, CodeBadJSON, "the body must be one JSON object")
	}
	if dec.More() {
		return nil, refuse(http.StatusBadRequest, CodeBadJSON, "the body must be one JSON object, found more after it")
	}
	if e := checkKeyCase(fields); e != nil {
		return nil, e
	}
	for _, f := range upstreamFields {
		raw, ok := fields[f]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil || !sameUpstream(s, configured) {
			return nil, refuse(http.StatusForbidden, CodeUpstreamDenied, "field %q names another server: this proxy only reaches its configured lab server", f)
		}
		delete(fields, f) // the lab server has no use for it
	}
	if e := checkFieldNames(fields, chat); e != nil {
		return nil, e
	}
	if chat {
		if _, ok := fields["messages"]; !ok {
			return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "a chat completion needs \"messages\"")
		}
	} else if _, ok := fields["prompt"]; !ok {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "a completion needs \"prompt\"")
	}
	seen := false
	names := []string{"max_tokens"}
	if chat {
		names = append(names, "max_completion_tokens")
	}
	for _, name := range names {
		raw, ok := fields[name]
		if !ok || string(raw) == "null" {
			delete(fields, name)
			continue
		}
		seen = true
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n < 1 {
			return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "%s must be a positive integer, got %s", name, clip(string(raw), 40))
		}
		if n > int64(maxTokens) {
			e := refuse(http.StatusBadRequest, CodeMaxTokens, "%s %d is over this proxy's limit of %d", name, n, maxTokens)
			e.Limit = int64(maxTokens)
			return nil, e
		}
	}
	if !seen {
		fields["max_tokens"] = json.RawMessage(fmt.Sprint(maxTokens))
	}
	// Several choices per request multiply the tokens past max_tokens.
	for _, name := range []string{"n", "best_of"} {
		if raw, ok := fields[name]; ok && string(raw) != "null" && string(raw) != "1" {
			return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "%s must be 1 through this proxy, got %s", name, clip(string(raw), 40))
		}
	}
	if raw, ok := fields["stream"]; ok && string(raw) != "true" && string(raw) != "false" && string(raw) != "null" {
		return nil, refuse(http.StatusBadRequest, CodeInvalidRequest, "stream must be true or false")
	}
	if e := checkFieldValues(fields); e != nil {
		return nil, e
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, CodeBadJSON, "the body could not be re-encoded: %v", err)
	}
	return out, nil
}

// completionFields and chatFields are the body fields the proxy passes on
// for /v1/completions and /v1/chat/completions: those the lab's clients send
// (run.py, servelab measure, the page's edge live mode), and n and best_of
// when they are 1. The upstream-naming fields are handled (and dropped)
// before these are checked.
var (
	completionFields = []string{"model", "prompt", "max_tokens", "temperature", "stream", "stream_options", "ignore_eos", "n", "best_of"}
	chatFields       = []string{"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "stream", "stream_options", "ignore_eos", "n"}
	// streamOptions are the stream_options the lab asks for (usage on every chunk).
	streamOptions = []string{"include_usage", "continuous_usage_stats"}
	// chatRoles are the message roles accepted; a message has only a role and a string content.
	chatRoles = []string{"system", "user", "assistant"}
)

// checkFieldNames refuses a body with any field outside completionFields
// (chatFields when chat), naming every such field.
func checkFieldNames(fields map[string]json.RawMessage, chat bool) *RequestError {
	allowed := completionFields
	if chat {
		allowed = chatFields
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, strconv.Quote(clip(k, 40)))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	if len(unknown) > 8 {
		unknown = append(unknown[:8], fmt.Sprintf("and %d more", len(unknown)-8))
	}
	word := "field"
	if len(unknown) > 1 {
		word = "fields"
	}
	return refuse(http.StatusBadRequest, CodeInvalidRequest, "%s %s not accepted: this proxy passes only the lab's fields (%s)",
		word, strings.Join(unknown, ", "), strings.Join(allowed, ", "))
}

// checkFieldValues checks the types of the accepted fields present in
// fields: one prompt (a string), messages as a list of {role, content}
// with string content, stream_options of the lab's boolean options, a
// numeric temperature, a boolean ignore_eos and a string model (null is
// accepted for each but prompt and messages). It rewrites messages and
// stream_options from what it decoded, so the lab server receives exactly
// what was checked (no duplicate keys inside them).
func checkFieldValues(fields map[string]json.RawMessage) *RequestError {
	isNull := func(raw json.RawMessage) bool { return string(raw) == "null" }
	if raw, ok := fields["prompt"]; ok {
		var p string
		if isNull(raw) || json.Unmarshal(raw, &p) != nil {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "\"prompt\" must be one string: a list of prompts or of token ids is a batch, one choice each, which this proxy does not pass")
		}
	}
	if raw, ok := fields["messages"]; ok {
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "\"messages\" must be a list of {\"role\", \"content\"} objects")
		}
		type message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		clean := make([]message, len(msgs))
		for i, m := range msgs {
			for k := range m {
				if k != "role" && k != "content" {
					return refuse(http.StatusBadRequest, CodeInvalidRequest, "message %d: field %q not accepted: a message has only \"role\" and \"content\"", i, clip(k, 40))
				}
			}
			if json.Unmarshal(m["role"], &clean[i].Role) != nil || !slices.Contains(chatRoles, clean[i].Role) {
				return refuse(http.StatusBadRequest, CodeInvalidRequest, "message %d: \"role\" must be one of %s", i, strings.Join(chatRoles, ", "))
			}
			if json.Unmarshal(m["content"], &clean[i].Content) != nil || isNull(m["content"]) {
				return refuse(http.StatusBadRequest, CodeInvalidRequest, "message %d: \"content\" must be a string (no content parts)", i)
			}
		}
		fields["messages"], _ = json.Marshal(clean)
	}
	if raw, ok := fields["stream_options"]; ok && !isNull(raw) {
		var opts map[string]json.RawMessage
		if json.Unmarshal(raw, &opts) != nil || opts == nil {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "\"stream_options\" must be an object")
		}
		clean := make(map[string]bool, len(opts))
		for k, v := range opts {
			if !slices.Contains(streamOptions, k) {
				return refuse(http.StatusBadRequest, CodeInvalidRequest, "stream_options field %q not accepted: only %s", clip(k, 40), strings.Join(streamOptions, ", "))
			}
			var b bool
			if json.Unmarshal(v, &b) != nil || isNull(v) {
				return refuse(http.StatusBadRequest, CodeInvalidRequest, "stream_options %q must be true or false", k)
			}
			clean[k] = b
		}
		fields["stream_options"], _ = json.Marshal(clean)
	}
	for _, f := range []struct {
		name, kind string
		into       any
	}{{"temperature", "number", new(float64)}, {"ignore_eos", "boolean", new(bool)}, {"model", "string", new(string)}} {
		if raw, ok := fields[f.name]; ok && !isNull(raw) && json.Unmarshal(raw, f.into) != nil {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "%q must be a %s, got %s", f.name, f.kind, clip(string(raw), 40))
		}
	}
	return nil
}

// knownFields are the body fields the proxy checks or a lab server reads.
// Go's JSON decoder (the lab server's, and others') matches keys ignoring
// case with Unicode folding, so "Max_Tokens" or "max_to\u212aens" (Kelvin
// sign) would reach max_tokens there while passing the exact-key checks here.
var knownFields = append([]string{"max_tokens", "max_completion_tokens", "min_tokens", "n", "best_of",
	"stream", "stream_options", "prompt", "messages", "model", "ignore_eos", "temperature"}, upstreamFields...)

var knownFolded = func() map[string]string {
	m := map[string]string{}
	for _, f := range knownFields {
		m[foldKey(f)] = f
	}
	return m
}()

// checkKeyCase refuses a key that case-folds to a known field but is not
// exactly it, and two keys that fold to the same name: either could reach a
// case-insensitive decoder upstream as a field this proxy never checked.
func checkKeyCase(fields map[string]json.RawMessage) *RequestError {
	seen := make(map[string]string, len(fields))
	for k := range fields {
		fk := foldKey(k)
		if f, ok := knownFolded[fk]; ok && f != k {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "field %q is not %q: field names must be written exactly", clip(k, 40), f)
		}
		if other, ok := seen[fk]; ok {
			return refuse(http.StatusBadRequest, CodeInvalidRequest, "fields %q and %q differ only in case: send one", clip(other, 40), clip(k, 40))
		}
		seen[fk] = k
	}
	return nil
}

// foldKey maps every rune to the smallest rune of its Unicode simple-folding
// orbit, so foldKey(a) == foldKey(b) exactly when strings.EqualFold(a, b),
// the comparison encoding/json uses for keys.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
