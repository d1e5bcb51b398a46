package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"servelab/cmd/internal/proxy"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestProxyConfigReadsSettings(t *testing.T) {
	cfg, err := proxyConfig(env(map[string]string{
		envUpstream: " http://lab.example:8000/v1 ", envAPIKey: "k", envMaxTokens: "256",
		envMaxBody: "2048", envPerMinute: "30", envBurst: "5",
	}), proxy.NewMemoryStore(10), proxy.NoRedirectClient())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream != "http://lab.example:8000/v1" || cfg.APIKey != "k" || cfg.MaxTokens != 256 || cfg.MaxBodyBytes != 2048 {
		t.Errorf("config %+v", cfg)
	}
	if cfg.Limiter == nil || cfg.Limiter.Rate != 0.5 || cfg.Limiter.Burst != 5 {
		t.Errorf("limiter %+v", cfg.Limiter)
	}
	cfg, err = proxyConfig(env(map[string]string{envUpstream: "http://lab"}), proxy.NewMemoryStore(10), proxy.NoRedirectClient())
	if err != nil || cfg.MaxTokens != proxy.DefaultMaxTokens || cfg.Limiter.Burst != proxy.DefaultBurst {
		t.Errorf("defaults: %+v %v", cfg, err)
	}
}

func TestBadSettingsAnswer503WithoutSecrets(t *testing.T) {
	store := proxy.NewMemoryStore(10)
	cases := []struct {
		env  map[string]string
		st   proxy.Store
		want string
	}{
		{map[string]string{}, store, envUpstream},
		{map[string]string{envUpstream: "http://lab", envMaxTokens: "lots"}, store, envMaxTokens},
		{map[string]string{envUpstream: "http://lab", envBurst: "0"}, store, envBurst},
		{map[string]string{envUpstream: "http://lab"}, nil, "edge.mjs"},
		{map[string]string{envUpstream: "ftp://lab", envAPIKey: "sk-hidden"}, store, "http or https"},
	}
	for _, c := range cases {
		h := newHandler(env(c.env), c.st, proxy.NoRedirectClient())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/api/v1/completions", strings.NewReader(`{"prompt":"x"}`)))
		var eb proxy.ErrorBody
		json.Unmarshal(w.Body.Bytes(), &eb)
		if w.Code != http.StatusServiceUnavailable || eb.Error.Code != proxy.CodeNotConfigured || !strings.Contains(eb.Error.Message, c.want) {
			t.Errorf("%v: %d %s, want 503 naming %s", c.env, w.Code, w.Body, c.want)
		}
		if strings.Contains(w.Body.String(), "sk-hidden") {
			t.Errorf("the key leaked: %s", w.Body)
		}
	}
}

func TestNonAPIPathsAreJSON404(t *testing.T) {
	h := newHandler(env(map[string]string{envUpstream: "http://lab"}), proxy.NewMemoryStore(10), proxy.NoRedirectClient())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/index.html", nil))
	if w.Code != 404 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Errorf("GET /index.html from the Go worker: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
}
