# servelab — make run (the playground), make test (everything CI runs), make bench.
GO       ?= go
WASMEXEC := $(shell $(GO) env GOROOT)/lib/wasm/go_js_wasm_exec
PURE     := ./sim/... ./hwspecs/... ./modelspecs/...

.PHONY: run test test-native test-wasm bench build

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

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./sim/... ./cmd/servelab/
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASMEXEC)" -run '^$$' -bench 'Run1500' -benchtime 5x ./sim/
