// Command worker serves the playground's /api proxy from Cloudflare Workers
// (github.com/syumai/workers): completions go to the one lab server named in
// the worker's environment, with the guard rails of cmd/internal/proxy, and
// SSE frames are relayed as they arrive. The static site is served by the
// platform (wrangler's assets directory), in front of this Go code, by
// edge.mjs: see README.md, "The playground at the edge".
//
// Only main_js.go and store_js.go need Workers (GOOS=js GOARCH=wasm); this
// file builds natively so that the handler is tested with `go test`.
package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"servelab/cmd/internal/proxy"
)

// The worker's settings, from wrangler vars (and `wrangler secret put` for
// the key).
const (
	envUpstream  = "LAB_SERVER_URL"
	envAPIKey    = "LAB_API_KEY"
	envMaxTokens = "MAX_TOKENS"
	envMaxBody   = "MAX_BODY_BYTES"
	envPerMinute = "RATE_LIMIT_PER_MINUTE"
	envBurst     = "RATE_LIMIT_BURST"
)

// proxyConfig reads the settings through getenv. Unset numbers take the
// proxy's defaults; the rate limit is always on.
func proxyConfig(getenv func(string) string, store proxy.Store, client proxy.Doer) (proxy.Config, error) {
	cfg := proxy.Config{
		Upstream:  strings.TrimSpace(getenv(envUpstream)),
		APIKey:    strings.TrimSpace(getenv(envAPIKey)),
		Client:    client,
		ClientKey: proxy.HeaderKey("CF-Connecting-IP"),
	}
	if cfg.Upstream == "" {
		return cfg, fmt.Errorf("%s is not set", envUpstream)
	}
	if store == nil {
		return cfg, fmt.Errorf("no rate-limit store: run the worker through edge.mjs, which keeps one")
	}
	num := func(name string, def, max int64) (int64, error) {
		s := strings.TrimSpace(getenv(name))
		if s == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > max {
			return 0, fmt.Errorf("%s=%q: want a whole number from 1 to %d", name, s, max)
		}
		return n, nil
	}
	var err error
	var n int64
	if n, err = num(envMaxTokens, proxy.DefaultMaxTokens, 1<<20); err != nil {
		return cfg, err
	}
	cfg.MaxTokens = int(n)
	if cfg.MaxBodyBytes, err = num(envMaxBody, proxy.DefaultMaxBodyBytes, 16<<20); err != nil {
		return cfg, err
	}
	perMin, err := num(envPerMinute, proxy.DefaultPerMinute, 1<<20)
	if err != nil {
		return cfg, err
	}
	burst, err := num(envBurst, proxy.DefaultBurst, 1<<20)
	if err != nil {
		return cfg, err
	}
	cfg.Limiter = proxy.NewLimiter(int(perMin), int(burst), store)
	return cfg, nil
}

// newHandler is the whole Go side of the worker: /api/ goes to the proxy,
// anything else is a JSON 404 (static files never get here). A bad or
// missing setting makes every /api answer a 503 that names the setting but
// not its value.
func newHandler(getenv func(string) string, store proxy.Store, client proxy.Doer) http.Handler {
	var api http.Handler
	cfg, err := proxyConfig(getenv, store, client)
	if err == nil {
		api, err = proxy.New(cfg)
	}
	if err != nil {
		msg := "the worker is not configured: " + err.Error()
		if cfg.APIKey != "" {
			msg = strings.ReplaceAll(msg, cfg.APIKey, "[key]")
		}
		api = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxy.WriteError(w, http.StatusServiceUnavailable, proxy.CodeNotConfigured, msg)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", api)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		proxy.WriteError(w, http.StatusNotFound, proxy.CodeNotFound, "not found")
	})
	return mux
}
