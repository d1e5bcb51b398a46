//go:build js && wasm

package main

import (
	"syscall/js"

	"servelab/cmd/internal/proxy"
)

// jsStore keeps rate-limit buckets in edge.mjs's module scope
// (globalThis.servelabRateStore). A Go instance lives for one request, but
// the module scope lives as long as the isolate, which serves many requests
// one after another; JavaScript runs one thing at a time there, and Go calls
// get and then set without yielding, so a bucket update is not interleaved.
type jsStore struct{ v js.Value }

// newJSStore finds the store, or returns nil when the worker runs without
// edge.mjs; the handler then refuses /api rather than run unlimited.
func newJSStore() proxy.Store {
	v := js.Global().Get("servelabRateStore")
	if v.Type() != js.TypeObject {
		return nil
	}
	return jsStore{v}
}

func (s jsStore) Get(key string) (proxy.Bucket, bool) {
	r := s.v.Call("get", key)
	if r.Type() != js.TypeObject {
		return proxy.Bucket{}, false
	}
	return proxy.Bucket{Tokens: r.Index(0).Float(), Last: int64(r.Index(1).Float())}, true
}

func (s jsStore) Put(key string, b proxy.Bucket) {
	s.v.Call("set", key, b.Tokens, float64(b.Last))
}
