package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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
// max_completion_tokens instead.
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
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, CodeBadJSON, "the body could not be re-encoded: %v", err)
	}
	return out, nil
}

// knownFields are the body fields the proxy checks or a lab server reads.
// Go's JSON decoder (the lab server's, and others') matches keys ignoring
// case with Unicode folding, so "Max_Tokens" or "max_to\u212aens" (Kelvin
// sign) would reach max_tokens there while passing the exact-key checks here.
var knownFields = append([]string{"max_tokens", "max_completion_tokens", "min_tokens", "n", "best_of",
	"stream", "stream_options", "prompt", "messages", "model", "ignore_eos"}, upstreamFields...)

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
