//go:build js && wasm

package main

import (
	"net/http"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
	"github.com/syumai/workers/cloudflare/fetch"
)

// fetchDoer sends upstream requests with the platform's fetch (Go's own
// transport cannot open sockets on Workers) and never follows a redirect.
type fetchDoer struct{ c *fetch.Client }

func (d fetchDoer) Do(r *http.Request) (*http.Response, error) {
	return d.c.Do(&fetch.Request{Request: r}, &fetch.RequestInit{Redirect: fetch.RedirectModeManual})
}

func main() {
	// Each request runs in a fresh Go instance, so the settings are read anew
	// and the rate-limit state lives in JavaScript (see store_js.go).
	workers.Serve(newHandler(cloudflare.Getenv, newJSStore(), fetchDoer{fetch.NewClient()}))
}
