package companion

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// LoopbackHosts are the Host header values a page served from a loopback
// listener on port sends: 127.0.0.1, localhost and [::1] with that port.
func LoopbackHosts(port int) []string {
	p := strconv.Itoa(port)
	return []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p}
}

// LoopbackOrigins are the page's own origins for a loopback listener on port.
func LoopbackOrigins(port int) []string {
	out := LoopbackHosts(port)
	for i, h := range out {
		out[i] = "http://" + h
	}
	return out
}

// IsLoopback reports whether host (a name or address, with or without a
// port) is a loopback address or "localhost".
func IsLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckHost reports whether r's Host header is one of allowed (compared
// without case). A DNS-rebinding page reaches a loopback server under its own
// host name, so anything else is refused.
func CheckHost(r *http.Request, allowed []string) bool {
	host := r.Host
	for _, a := range allowed {
		if strings.EqualFold(host, a) {
			return true
		}
	}
	return false
}

// CheckOrigin reports whether r may proceed given its Origin header: absent
// (same-origin navigation, curl) or exactly one of allowed. "null" and any
// other origin are refused, and so is a browser's Sec-Fetch-Site:
// cross-site when no Origin came with it. Never a wildcard.
func CheckOrigin(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") != "cross-site"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	for _, a := range allowed {
		if a != "*" && strings.EqualFold(origin, a) {
			return true
		}
	}
	return false
}

// Guard wraps h: requests with a Host outside hosts or an Origin outside
// origins get 403 before h sees them. An allowed cross-origin caller gets
// its own origin echoed in Access-Control-Allow-Origin (never "*") and
// preflights are answered here. It is HostGuard(OriginGuard(h, origins), hosts).
func Guard(h http.Handler, hosts, origins []string) http.Handler {
	return HostGuard(OriginGuard(h, origins), hosts)
}

// HostGuard wraps h: a request whose Host is not one of hosts gets 403
// (DNS-rebinding protection) before h sees it. It checks nothing else, so
// a page behind it can be embedded by a page of any origin.
func HostGuard(h http.Handler, hosts []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !CheckHost(r, hosts) {
			writeError(w, http.StatusForbidden, "host_not_allowed", "this server answers only to "+strings.Join(hosts, ", ")+" (DNS-rebinding protection)")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// OriginGuard wraps h, an API: a request refused by CheckOrigin(r, origins)
// gets 403 before h sees it; an allowed cross-origin caller gets its own
// origin echoed in Access-Control-Allow-Origin (never "*"), and its
// preflights get 204 here.
func OriginGuard(h http.Handler, origins []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !CheckOrigin(r, origins) {
			writeError(w, http.StatusForbidden, "origin_not_allowed", "requests from pages of another origin are not allowed")
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", o)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Content-Type")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
