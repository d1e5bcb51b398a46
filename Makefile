# servelab — make run (the playground), make test (everything CI runs), make bench.
GO       ?= go
WASMEXEC := $(shell $(GO) env GOROOT)/lib/wasm/go_js_wasm_exec
PURE     := ./sim/... ./hwspecs/... ./modelspecs/...

.PHONY: run test test-native test-wasm bench build worker worker-local

run:
	$(GO) run ./cmd/servelab demo interference

build:
	$(GO) build -trimpath -o bin/servelab ./cmd/servelab

test: test-native test-wasm

test-native:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# The pure packages again, compiled to wasm and run under node, as the browser runs them.
test-wasm:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(WASMEXEC)" $(PURE)

# The site and the /api proxy as a Cloudflare Worker: build/worker/{script,assets,workerd.capnp}.
# Prints the script's size (gzip) against the Workers limit. Deploy with cmd/worker/wrangler.jsonc.
worker:
	$(GO) run ./cmd/worker/bundle -o build/worker -site site $(if $(LAB),-lab $(LAB))

# The worker locally in workerd (npm ci --prefix cmd/worker), proxying to LAB (default 127.0.0.1:8000).
worker-local: worker
	cd build/worker && ../../cmd/worker/node_modules/.bin/workerd serve workerd.capnp

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./sim/... ./cmd/servelab/
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASMEXEC)" -run '^$$' -bench 'Run1500' -benchtime 5x ./sim/
