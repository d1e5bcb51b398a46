//go:build unix

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestPageRunsFromWorker opens the page from workerd in headless Chromium:
// the app must start from the wasm the worker serves (compressed, through
// edge.mjs) and find the live API at api/health, as it does under
// `servelab serve`.
func TestPageRunsFromWorker(t *testing.T) {
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("Chromium not found at %s (install it with `apt-get install -y chromium`, as .ci/run does): %v", path, err)
	}
	base, _, _, _ := startStack(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 800),
		chromedp.Flag("use-angle", "swiftshader"), chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// The page's console and uncaught exceptions, shown when the test fails.
	var mu sync.Mutex
	var console []string
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			line = string(ev.Type) + ":"
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					line += " " + string(a.Value)
				} else {
					line += " " + a.Description
				}
			}
		case *runtime.EventExceptionThrown:
			line = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				line += " " + ev.ExceptionDetails.Exception.Description
			}
		default:
			return
		}
		mu.Lock()
		console = append(console, line)
		mu.Unlock()
	}))
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("page console:\n%s", strings.Join(console, "\n"))
			mu.Unlock()
		}
	})
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer func() { cancelT(); cancelC(); cancelA() }()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	wait := func(pred, what string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			msg, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`(document.getElementById("message")||{}).textContent || ""`))
			state, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`JSON.stringify({servelab: !!window.servelab, ready: !!(window.servelab && servelab.ready), timings: window.servelab && servelab.timings ? servelab.timings() : null})`))
			t.Fatalf("waiting for %s (%s): %v; page message: %q; state %s", what, pred, err, msg, state)
		}
	}
	wait(`window.servelab && servelab.ready && servelab.timings().drawnGen >= 1`, "the app to draw its first frame")
	t.Logf("the app drew its first frame %v after navigating to the worker", time.Since(start).Round(time.Millisecond))
	// The page's live mode drives `servelab serve`'s measurement API, which
	// the worker does not offer: its controls must stay hidden, not offer a
	// button that fails. (The app probes api/health before its first frame.)
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const e = document.getElementById("live"); return !e || e.hidden; })()`))
	if err != nil || !hidden {
		t.Fatalf("live controls shown on the worker (hidden=%v, %v)", hidden, err)
	}
}
