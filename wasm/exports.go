//go:build js && wasm

package main

import (
	"fmt"
	"strings"
	"syscall/js"

	"github.com/hajimehoshi/ebiten/v2"
)

func (a *App) figuresJSON() string {
	a.publish()
	return figuresJSONOf(a.pub)
}

// figuresCSV is the figures export; its headers are in the page's language.
func (a *App) figuresCSV() string {
	f := a.bg.figs
	var sb strings.Builder
	sb.WriteString(a.tr("csv.head") + "\n")
	for i, n := range []string{"ttft", "tpot", "itl"} {
		v := [][3]float64{f.TTFT, f.TPOT, f.ITL}[i]
		fmt.Fprintf(&sb, "%s,%s,%s,%s\n", n, ms(v[0]), ms(v[1]), ms(v[2]))
	}
	fmt.Fprintf(&sb, "\n%s,%g\n%s,%g\n%s,%g\n", a.tr("csv.attain"), f.Attainment, a.tr("csv.goodput"), f.Goodput, a.tr("csv.throughput"), f.Throughput)
	sb.WriteString("\n" + a.tr("csv.rates") + "\n")
	for _, p := range a.bg.rates {
		fmt.Fprintf(&sb, "%g,%s,%s,%g\n", p.Rate, ms(p.TTFTP90), ms(p.TPOTP90), p.Attainment)
	}
	fmt.Fprintf(&sb, "\n%s,%q\n", a.tr("csv.query"), a.s.state.Query())
	return sb.String()
}

// download hands text to the browser as a file.
func (a *App) download(name, mime, text string) {
	blob := a.pg.win.Get("Blob").New([]any{text}, map[string]any{"type": mime})
	a.saveBlob(name, blob)
}

func (a *App) saveBlob(name string, blob js.Value) {
	u := a.pg.win.Get("URL").Call("createObjectURL", blob)
	link := a.pg.doc.Call("createElement", "a")
	link.Set("href", u)
	link.Set("download", name)
	a.pg.doc.Get("body").Call("appendChild", link)
	link.Call("click")
	link.Call("remove")
	var revoke js.Func
	revoke = a.jsFunc("download", nil, func([]js.Value) { revoke.Release(); a.pg.win.Get("URL").Call("revokeObjectURL", u) })
	a.pg.win.Call("setTimeout", revoke, 10000)
}

// exportPNG reads the painted timeline back and writes it with its labels into a PNG.
func (a *App) exportPNG() {
	if a.tl.w == 0 {
		return
	}
	// The screen is not readable outside Draw: the picture is painted again off screen.
	off := ebiten.NewImage(a.tl.w, a.tl.h)
	defer off.Deallocate()
	a.paintAll(off)
	pix := make([]byte, 4*a.tl.w*a.tl.h)
	off.ReadPixels(pix)
	// The frame's own constructors: CopyBytesToJS checks the array's type in this realm.
	arr := js.Global().Get("Uint8ClampedArray").New(len(pix))
	js.CopyBytesToJS(arr, pix)
	cv := a.pg.own.Call("createElement", "canvas")
	cv.Set("width", a.tl.w)
	cv.Set("height", a.tl.h)
	ctx := cv.Call("getContext", "2d")
	ctx.Call("putImageData", js.Global().Get("ImageData").New(arr, a.tl.w, a.tl.h), 0, 0)
	ctx.Set("fillStyle", "#dddddd")
	ctx.Set("textBaseline", "top")
	ctx.Set("font", fmt.Sprintf("%dpx sans-serif", int(12*a.tl.dpr)))
	for _, l := range a.tl.labels {
		ctx.Call("fillText", l.text, l.x, l.y)
	}
	cv.Call("toBlob", js.FuncOf(func(this js.Value, args []js.Value) any {
		a.guard("PNG export", func() {
			if len(args) > 0 && args[0].Truthy() {
				a.saveBlob("servelab-timeline.png", args[0])
			}
		})
		return nil
	}), "image/png")
}
