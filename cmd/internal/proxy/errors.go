package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Error codes the proxy answers with, in the "code" field of an error body.
// Clients can switch on them; the message is for people.
const (
	CodeNotFound         = "not_found"
	CodeMethod           = "method_not_allowed"
	CodeMediaType        = "unsupported_media_type"
	CodeBodyTooLarge     = "body_too_large"
	CodeBadJSON          = "invalid_json"
	CodeInvalidRequest   = "invalid_request"
	CodeMaxTokens        = "max_tokens_too_large"
	CodeUpstreamDenied   = "upstream_not_allowed"
	CodeOriginDenied     = "origin_not_allowed"
	CodeRateLimited      = "rate_limited"
	CodeUpstreamError    = "upstream_error"
	CodeUpstreamDown     = "upstream_unreachable"
	CodeNotConfigured    = "not_configured"
	CodeStreamInterrupts = "stream_interrupted"
)

// ErrorBody is the JSON every error answer carries. It follows the OpenAI
// shape ({"error": {...}}) so clients written for a lab server read it too.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what was wrong and which limit or value was involved.
type ErrorDetail struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
	// Limit is the configured bound a request broke, when one did.
	Limit int64 `json:"limit,omitempty"`
	// RetryAfter is the number of seconds to wait before asking again (429 only).
	RetryAfter int `json:"retry_after,omitempty"`
}

// WriteError answers with status and a JSON error body. Nothing from the
// configuration (upstream address, API key) ever goes into message.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	writeErrorDetail(w, status, ErrorDetail{Message: message, Code: code})
}

func writeErrorDetail(w http.ResponseWriter, status int, d ErrorDetail) {
	if d.Type == "" {
		d.Type = "invalid_request_error"
		if status >= 500 {
			d.Type = "server_error"
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if d.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(d.RetryAfter))
	}
	w.WriteHeader(status)
	b, _ := json.Marshal(ErrorBody{Error: d})
	w.Write(append(b, '\n'))
}

// retrySeconds rounds a wait up to whole seconds, at least one, as Retry-After wants.
func retrySeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
