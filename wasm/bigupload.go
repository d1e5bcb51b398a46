//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"html"
	"sync/atomic"
	"syscall/js"

	"servelab/sim"
	"servelab/wasm/play"
)

// bigUploadBytes is the size from which an upload is read in slices
// between frames: Go's wasm has one thread, and json.Unmarshal of a large
// file would hold the page for seconds.
const bigUploadBytes = 4 << 20

// bigUpload is a large upload being read: copied out of the browser's
// file in slices, then decoded one gap at a time, yielding to the browser
// every few milliseconds; Cancel stops it and changes nothing.
type bigUpload struct {
	running bool
	name    string
	size    float64 // bytes
	frac    float64 // 0..1
	cancel  *atomic.Bool
}

// evCancelBig is the Cancel button of a large upload.
type evCancelBig struct{}

// bigUploadPanel shows a large upload's progress and its Cancel button.
type bigUploadPanel struct{}

func (bigUploadPanel) bind(p *page, emit func(event)) {
	p.listen(p.el("upload-progress"), "click", func(ev js.Value) {
		if ev.Get("target").Get("id").String() == "upload-cancel" {
			emit(evCancelBig{})
		}
	})
}

func (bigUploadPanel) render(p *page, u *uiState) {
	b := u.big
	if b == nil || !b.running {
		p.setHTML("upload-progress", "")
		return
	}
	p.setHTML("upload-progress", fmt.Sprintf(`<p class="small" aria-live="polite"><progress max="1" value="%.3f"></progress> %s <button id="upload-cancel" type="button">%s</button></p>`,
		b.frac, html.EscapeString(u.trf("big.reading", b.name, 100*b.frac, b.size/1e6)), html.EscapeString(u.tr("big.cancel"))))
}

// handleJobs applies the events of the background jobs (calibration, large uploads).
func (a *App) handleJobs(ev event) {
	switch ev.(type) {
	case evCalibrate:
		a.startCalibration()
	case evCancelCalibrate:
		a.cancelCalibration()
	case evCancelBig:
		if a.sched.big.running && a.sched.big.cancel != nil {
			a.sched.big.cancel.Store(true)
		}
	}
}

// loadBig reads a large upload f without holding the page: a goroutine
// reads the file and decodes it in slices (a lab JSON, a benchmark tool's
// file or a trace), and the overlay or the trace lands through post like a
// small upload's.
func (a *App) loadBig(f js.Value, name string, size float64) {
	if a.sched.big.running {
		a.sched.big.cancel.Store(true) // the newer file wins
	}
	cancel := &atomic.Bool{}
	a.sched.big = bigUpload{running: true, name: name, size: size, cancel: cancel}
	a.pn.big.render(a.pg, a.ui()) // only the progress changed: the rest of the page stays drawn
	progress := func(frac float64) error {
		if cancel.Load() {
			return errCancelled
		}
		a.post(func() {
			if a.sched.big.cancel == cancel {
				a.sched.big.frac = frac
				a.pn.big.render(a.pg, a.ui())
			}
		})
		yieldTask() // the browser draws and answers here
		if cancel.Load() {
			return errCancelled
		}
		return nil
	}
	// finish ends the upload on the Update goroutine: cancelled, failed
	// (bad names the message), or ok with what was read.
	finish := func(err error, bad string, ok func()) {
		a.post(func() {
			if a.sched.big.cancel != cancel {
				return
			}
			a.sched.big.running = false
			switch {
			case errors.Is(err, errCancelled):
				a.disp.info = play.Tf(a.disp.lang, "big.cancelled", name)
				a.render()
			case err != nil:
				a.sched.big = bigUpload{}
				a.render()
				a.message(play.Tf(a.disp.lang, bad, play.SayError(a.disp.lang, err)), true)
			default:
				ok()
			}
		})
	}
	done := func(o *play.Overlay, err error) { finish(err, "up.bad", func() { a.addOverlay(name, o) }) }
	// A trace becomes the workload, as a small one does (loadMeasured).
	doneTrace := func(reqs []sim.Request, err error) {
		finish(err, "up.badtrace", func() {
			n := a.s.files.UseTrace(name, reqs)
			a.change("workload", "trace")
			a.disp.info = play.Tf(a.disp.lang, "up.trace", name, n)
			a.render()
		})
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				a.post(func() { a.sched.big.running = false; a.fail("reading "+name, r) })
			}
		}()
		data, err := readInSlices(f, func(f float64) error { return progress(0.2 * f) })
		if err != nil {
			done(nil, fmt.Errorf("%s: %w", name, err))
			return
		}
		rest := play.Paced(func(f float64) error { return progress(0.2 + 0.8*f) })
		if play.IsBigTrace(name, data) {
			reqs, err := play.ReadTraceSliced(name, data, rest)
			doneTrace(reqs, err)
			return
		}
		o, err := play.ParseMeasuredSliced(name, data, rest)
		done(o, err)
	}()
}

// readInSlices reads the browser's file f into Go 2 MB at a time, each
// slice a Blob read of its own, yielding between. Reading the whole file
// at once (arrayBuffer) held the page for one task of the browser's own:
// 80 ms for a 50 MB file.
func readInSlices(f js.Value, yield func(float64) error) ([]byte, error) {
	n := f.Get("size").Int()
	data := make([]byte, n)
	const step = 2 << 20
	for off := 0; off < n; off += step {
		end := min(n, off+step)
		buf, err := await(f.Call("slice", off, end).Call("arrayBuffer"))
		if err != nil {
			return nil, err
		}
		// A file changed on disk since it was chosen fails to read (the
		// browser's NotReadableError) rather than coming back short.
		js.CopyBytesToGo(data[off:end], js.Global().Get("Uint8Array").New(buf))
		if err := yield(float64(end) / float64(n)); err != nil {
			return nil, err
		}
	}
	return data, nil
}
