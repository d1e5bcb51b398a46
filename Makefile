# servelab — make run (the playground), make test (everything CI runs), make bench.
GO       ?= go
WASMEXEC := $(shell $(GO) env GOROOT)/lib/wasm/go_js_wasm_exec
PURE     := ./sim/... ./hwspecs/... ./modelspecs/...

.PHONY: run test test-native test-wasm bench build worker worker-local deps deps-run fidelity fidelity-fit

# What the tests need beyond Go and node/npm (Chromium, brotli, python3, workerd ...), installed
# with apt/npm when missing; a quick check when present. The lists are at the top of .ci/deps.
deps:
	./.ci/deps test
deps-run:
	./.ci/deps run

# The playground with the live companion and its embedded lab servers; prints the URL.
# The native binary's packages compile while app.wasm builds (a cold cache: 91 s in a row, about a
# third less side by side on two cores); the compile is only a warm-up, so its errors are go run's to report.
run:
	$(GO) build -o /dev/null ./cmd/servelab 2>/dev/null & warm=$$!; $(MAKE) --no-print-directory wasm-app; s=$$?; wait $$warm; [ $$s -eq 0 ]
	$(GO) run ./cmd/servelab serve

# A static binary (no cgo): it runs anywhere and starts sooner, with no dynamic loader
# (`servelab demo interference` took 13.6 ms here against 15.2 ms built with cgo).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/servelab ./cmd/servelab

# Everything CI runs. .ci/test orders it: the timed suites one after the other, and what times nothing
# in the background: compressing app.wasm at the lowest priority, the tests under node beside the tiny lab.
test: deps tinylab-deps wasm-app
	MAKE="$(MAKE)" GO="$(GO)" ./.ci/test

# Packages that time real token streams (the lab server, the measuring client, run.py against them,
# calibration from such a run, the tiny lab) run one after the other, after the rest: two of them at
# once on two cores would distort each other's clocks. Each runs once: their checks hold on a busy
# machine (the tiny lab's compares its two tools over the steps both timed, and fits and predicts on
# two runs made at once). The two browser suites run side by side: the site's keeps the CPU about 80%
# busy, the worker's (mostly waiting on a 10 s edge measurement and workerd) about 25%, and their
# checks hold under each other's load (site/e2e's "page held" bounds are 1 s; the worker's relayed
# frames must keep within 2× the lab's cadence), so the worker's suite fills the CPU the site's leaves.
REALTIME := ./cmd/servelab ./cmd/internal/labserver ./cmd/internal/labclient ./cmd/internal/companion
BROWSERS := ./site/e2e ./cmd/worker/e2e
# The CLI's tests that time nothing and take a while (the fidelity fit's cross-validation, the golden
# corpus) run apart from its real-time ones, on the core those leave idle (.ci/test: beside them, niced).
UNTIMED := ^(TestCrossValidationHoldsPointsOut|TestCorpusUnchanged)$$
.PHONY: test-units test-realtime test-untimed test-tinylab test-browsers
test-native: test-units test-realtime test-untimed test-tinylab test-browsers
test-units:
	$(GO) vet ./...
	$(GO) test -count=1 $$($(GO) list ./... | grep -v '/e2e$$' | grep -vxF $(foreach p,$(REALTIME),-e servelab/$(patsubst ./%,%,$(p))))
test-realtime:
	$(GO) test -count=1 -timeout 30m -p 1 -skip '$(UNTIMED)' $(REALTIME)
test-untimed:
	$(GO) test -count=1 -run '$(UNTIMED)' ./cmd/servelab
test-tinylab: tinylab-deps
	$(GO) test -count=1 -timeout 10m ./cmd/tinylab/e2e
# The browser suites load the built app with its compressed variants (static hosts, the worker).
test-browsers: wasm
	$(GO) test -count=1 -timeout 30m -p 2 $(BROWSERS)

# The pure packages again, compiled to wasm and run under node, as the browser runs them; the
# page's own package (wasm/play) in the same go test, so that it runs beside the longest ones
# (sim, sim/results) rather than after them on one core.
test-wasm:
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/...
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(WASMEXEC)" ./sim/results ./sim ./wasm/play/... $(PURE)

# The site and the /api proxy as a Cloudflare Worker: build/worker/{script,assets,workerd.capnp}.
# Prints the script's size (gzip) against the Workers limit. Deploy with cmd/worker/wrangler.jsonc.
worker: wasm
	$(GO) run ./cmd/worker/bundle -o build/worker -site site $(if $(LAB),-lab $(LAB))

# The worker locally in workerd (npm ci --prefix cmd/worker), proxying to LAB (default 127.0.0.1:8000).
worker-local: deps worker
	cd build/worker && ../../cmd/worker/node_modules/.bin/workerd serve workerd.capnp

# The step model's profiles against the published points (cmd/servelab/testdata/fidelity):
# published, lecture, vllm, error, the median/worst |error| by regime, and the vllm fit's
# error on points held out of it (5-fold cross-validation: minutes).
fidelity:
	$(GO) run ./cmd/servelab fidelity --cv 5

# Refit the vllm profile to the points (every stage, then 5-fold cross-validation; about 10 minutes
# on 2 busy cores) and rewrite it with its held-out errors; review the diff.
fidelity-fit:
	$(GO) run ./cmd/servelab fidelity --fit --write sim/profiles/vllm.json

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 20x ./sim/... ./cmd/servelab/
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASMEXEC)" -run '^$$' -bench 'Run1500' -benchtime 5x ./sim/
	$(MAKE) bench-core
	$(MAKE) bench-browser
	$(MAKE) bench-lab

# The simulator core: demo interference side by side with the plain-Python implementation
# (the ratio), the 100 000-request run's time and memory, and the page's re-simulations and
# background panels in the browser's runtime (wasm under node).
.PHONY: bench-core
bench-core:
	$(GO) run ./cmd/servelab/benchcore -repeat 5
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASMEXEC)" -run '^$$' -bench . -benchtime 10x ./wasm/play/

# The lab tools' own timing: servelab measure vs run.py against the cadence lab server
# (16/64/256 streams), and the lab server holding 1000 streams (needs python3).
.PHONY: bench-lab
bench-lab:
	$(GO) run ./cmd/servelab/bench -repeat 5

# The browser playground: app.wasm and wasm_exec.js in site/, plus the pre-compressed .gz/.br that
# site.Handler sends to static hosts' and the worker's clients (`make wasm`). `make run` serves on
# loopback and needs neither, so it builds app.wasm alone (`wasm-app`) and drops compressed variants
# older than it: the handler must never send a stale build.
WASM_SRC := $(shell find wasm sim hwspecs modelspecs -name '*.go' 2>/dev/null) go.mod go.sum
.PHONY: wasm wasm-app test-browser bench-browser
wasm: site/app.wasm site/app.wasm.gz site/app.wasm.br site/version.js
wasm-app: site/app.wasm site/version.js
	for f in site/app.wasm.gz site/app.wasm.br; do if [ -f $$f ] && [ $$f -ot site/app.wasm ]; then rm -f $$f; fi; done
site/app.wasm: $(WASM_SRC)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o site/app.wasm ./wasm
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" site/wasm_exec.js
# app.wasm.gz is what a plain static host sends (site/load.js unpacks it): pigz -11 (zopfli) makes it
# about 5% smaller than gzip -9 (4.2 against 4.4 MB, under the 4.5 MB page budget) for about a minute on two cores.
site/app.wasm.gz: site/app.wasm
	if command -v pigz >/dev/null; then pigz -11 -I 3 -c site/app.wasm > site/.app.wasm.gz.tmp; \
	else echo "pigz not installed: gzip -9 for app.wasm.gz (about 5% larger; apt-get install pigz)"; gzip -9 -c site/app.wasm > site/.app.wasm.gz.tmp; fi
	mv site/.app.wasm.gz.tmp site/app.wasm.gz
site/app.wasm.br: site/app.wasm
	if command -v brotli >/dev/null; then brotli -q 10 -c site/app.wasm > site/.app.wasm.br.tmp && mv site/.app.wasm.br.tmp site/app.wasm.br; \
	else rm -f site/app.wasm.br; echo "brotli not installed: serving app.wasm.gz only (apt-get install brotli)"; fi

# The build's version (a checksum of app.wasm and the page's files) names the offline cache
# (site/sw.js); app.wasm's size lets the page show how far the download is (site/load.js).
SITE_SRC := $(filter-out site/version.js,$(wildcard site/*.html site/*.css site/*.js site/*.svg))
site/version.js: site/app.wasm $(SITE_SRC)
	printf '// Written by make wasm: the build (sw.js names its cache after it) and the size of app.wasm.\nself.servelabBuild = {version: "%s", wasmBytes: %d};\n' \
		"$$(cat site/app.wasm $(SITE_SRC) | cksum | cut -d' ' -f1)" "$$(wc -c < site/app.wasm)" > site/.version.js.tmp && mv site/.version.js.tmp $@

# Headless Chromium drives the page (needs /usr/bin/chromium; `make deps` installs it).
test-browser: deps wasm
	$(GO) test -count=1 ./site/e2e/

# Re-simulation + redraw time, first frame and wasm size on the wire, in headless Chromium.
bench-browser: wasm
	$(GO) test -count=1 -timeout 90m -run '^$$' -bench Browser -benchtime 1x ./site/e2e/

# Input-to-screen of this build beside another's in the same run, moves alternating:
# make bench-input BASE=/path/to/other/checkout/site (after `make wasm-app` there);
# CASES='main rate|chapter spec' and RATES=1,4 narrow it; TRACE=1 logs, per move, the app's steps,
# the browser's long animation frames and what text changed first.
.PHONY: bench-input
bench-input: wasm-app
	SERVELAB_BASE_SITE=$(BASE) SERVELAB_INPUT_CASES='$(CASES)' SERVELAB_INPUT_RATES=$(RATES) SERVELAB_INPUT_TRACE=$(TRACE) \
		$(GO) test -count=1 -timeout 90m -run '^$$' -bench BrowserInputToScreen -benchtime 1x ./site/e2e/

# The lab without a GPU: llama.cpp (node-llama-cpp's prebuilt linux-x64 CPU binary) behind
# cmd/tinylab's OpenAI-compatible front, on a random-weight Llama that `servelab gguf` writes.
# make tinylab PORT=8000 BUDGET=2048 (BUDGET=0: --no-enable-chunked-prefill); ready when /v1/models answers.
.PHONY: tinylab tinylab-deps
PORT   ?= 8000
BUDGET ?= 2048
TINYLAB_MODEL := build/tinylab/tinylab.gguf
tinylab: tinylab-deps $(TINYLAB_MODEL)
	node cmd/tinylab/server.mjs --model $(TINYLAB_MODEL) --port $(PORT) \
		$(if $(filter 0,$(BUDGET)),--no-enable-chunked-prefill,--max-num-batched-tokens $(BUDGET))

$(TINYLAB_MODEL): cmd/internal/gguf/gguf.go cmd/servelab/gguf.go
	$(GO) run ./cmd/servelab gguf -o $@ --hf-config build/tinylab/config.json

# node-llama-cpp and its linux-x64 CPU binary only (83 MB; every optional prebuilt would be 732 MB).
# Idempotent: npm runs only when the lock file is newer than the last install. No install
# scripts: the prebuilt binary is used as it is, nothing is downloaded or compiled later.
tinylab-deps: cmd/tinylab/node_modules/.package-lock.json
cmd/tinylab/node_modules/.package-lock.json: cmd/tinylab/package-lock.json cmd/tinylab/package.json
	npm ci --prefix cmd/tinylab --omit=optional --ignore-scripts --no-audit --no-fund
	touch $@
