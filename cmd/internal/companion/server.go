package companion

import (
	"net/http"
	"time"
)

// Timeouts bound how long a client may hold a connection without sending:
// its request headers, the whole request (headers and body), and an idle
// keep-alive connection between requests. None of them limits how long a
// response streams.
type Timeouts struct {
	Header  time.Duration // request line and headers
	Request time.Duration // headers and body together
	Idle    time.Duration // a keep-alive connection with no request
}

// DefaultTimeouts are the servers' timeouts: long enough for a lab client's
// largest prompt on a slow link, short enough that idle or trickling clients
// do not pile up.
var DefaultTimeouts = Timeouts{Header: 10 * time.Second, Request: 30 * time.Second, Idle: 30 * time.Second}

// HTTPServer is an http.Server for h with the timeouts t. No WriteTimeout:
// it would cut long streams. ReadTimeout does not: net/http lifts the read
// deadline once the body has been read (to watch for the client leaving).
func HTTPServer(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.Header, ReadTimeout: t.Request, IdleTimeout: t.Idle, MaxHeaderBytes: 1 << 20}
}
