//go:build !js

package play

// The English texts the page shows before the simulator runs (the
// download, its failures, the controls that wait for it), and the static
// chapter's note. cmd/sitegen writes them into the static page; the app,
// once it runs, shows none of them, so they stay out of app.wasm (the build
// tag). Merged into catalogueEN.
var bootEN = map[string]string{
	"boot.loading":  "loading the simulator… ",
	"boot.starting": "starting the simulator… ",
	"boot.noexec":   "wasm_exec.js is missing: build the app with `make wasm`.",
	"boot.nowasm":   "This browser has no WebAssembly.",
	"boot.stopped":  "The simulator stopped. Reload the page to start it again.",
	"boot.failed":   "Could not start the simulator (app.wasm): %s. Build it with `make wasm`.",
	"boot.waiting":  "The settings, the playback and the side panels work once the simulator has loaded; the chapter's text and table are here already.",
	"boot.mb":       "%.1f of %.1f MB",
	"ch.static":     "The table at the chapter's settings, from the page as it loaded; the sliders move it once the simulator runs.",
}

func init() {
	for k, v := range bootEN {
		catalogueEN[k] = v
	}
}
