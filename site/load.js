// Starts loading the simulator as the page opens: window.servelabModule is a
// promise of the compiled app.wasm, which the timeline frame (app.js)
// instantiates. window.servelabProgress(fn) calls fn({loaded, total, source})
// as the bytes arrive. After the first visit the app also works offline: the
// wasm is kept in Cache Storage under the build's version (version.js, written
// by `make wasm`) and sw.js keeps and serves the rest of the site.
//
// Any host: where the host compresses app.wasm itself (servelab serve, the edge
// worker, most CDNs), it comes with a Content-Encoding the browser undoes.
// A plain static host (python3 -m http.server) would send the raw 15 MB, so
// there the page fetches the pre-compressed app.wasm.gz (about 4 MB) and
// unpacks it here (DecompressionStream knows gzip, not brotli).
(function () {
  "use strict";
  // A link with settings or a chapter is not a first visit: the "start here"
  // card (index.html) is for the bare page (a language alone still is one).
  var q = new URLSearchParams(location.search);
  q.delete("lang");
  if (q.toString() !== "") document.documentElement.classList.add("linked");
  // Milliseconds since navigation at each start-up stage (the benchmark reports them).
  window.servelabMarks = {};
  var build = window.servelabBuild; // {version, wasmBytes}; absent before `make wasm`
  var v = build ? "?v=" + encodeURIComponent(build.version) : "";
  var cacheName = build ? "servelab-" + build.version : "";
  var key = "app.wasm" + v; // the cache keeps app.wasm under one of these
  var gzKey = "app.wasm.gz" + v;
  var progress = { loaded: 0, total: build ? build.wasmBytes : 0, source: "" };
  var listeners = [];
  window.servelabProgress = function (fn) {
    listeners.push(fn);
    fn(progress);
  };
  function report() {
    listeners.forEach(function (fn) {
      try { fn(progress); } catch (e) { /* a frame that went away */ }
    });
  }
  // counted passes a stream of the wasm's bytes through, counting them.
  function counted(body) {
    return body.pipeThrough(new TransformStream({
      transform: function (chunk, ctl) {
        progress.loaded += chunk.byteLength;
        report();
        ctl.enqueue(chunk);
      },
    }));
  }

  function encoded(r) {
    var ce = (r.headers.get("Content-Encoding") || "").trim().toLowerCase();
    return ce !== "" && ce !== "identity";
  }

  // fromNetwork resolves to app.wasm's bytes as the host sent them: {body,
  // gz}, gz when the body is still gzip-compressed.
  async function fromNetwork() {
    var head = await fetch(key, { method: "HEAD" }).catch(function () { return null; });
    if (!(head && head.ok && encoded(head)) && window.DecompressionStream) {
      var gz = await fetch(gzKey);
      if (gz.ok) {
        progress.source = "app.wasm.gz";
        // A host that sends the .gz with Content-Encoding: gzip has had the
        // browser unpack it already: unpacking it again would fail.
        return { body: gz.body, gz: !encoded(gz) };
      }
      if (gz.body) gz.body.cancel();
    }
    var r = await fetch(key);
    if (!r.ok) throw new Error("app.wasm: HTTP " + r.status);
    progress.source = encoded(r) ? "app.wasm (" + r.headers.get("Content-Encoding") + ")" : "app.wasm";
    return { body: r.body, gz: false };
  }

  // The cache is only worth filling where sw.js can serve the page offline.
  var cacheable = cacheName && window.caches && navigator.serviceWorker;
  var cached = Promise.resolve(false); // settles once this build's wasm is in the cache

  // afterFirstFrame runs f once the app has drawn its first frame (or 15 s
  // after navigation, if it never does) and the browser is idle: the copy
  // is not written while the page starts, whose CPU it would take from the
  // compiler and the app's first frame.
  function afterFirstFrame(f) {
    (function poll() {
      if (!servelabMarks.drawn && performance.now() < 15000) return setTimeout(poll, 250);
      if (window.requestIdleCallback) requestIdleCallback(f, { timeout: 5000 });
      else setTimeout(f, 0);
    })();
  }

  // keep stores a stream in the cache under name, as one Blob: the browser
  // then writes it in one piece rather than a chunk at a time.
  async function keep(cache, name, body) {
    var chunks = [];
    var reader = body.getReader();
    for (;;) {
      var r = await reader.read();
      if (r.done) break;
      chunks.push(r.value);
    }
    await cache.put(name, new Response(new Blob(chunks), { headers: { "Content-Type": "application/octet-stream" } }));
    servelabMarks.cached = performance.now();
    return true;
  }

  function gunzip(body) { return body.pipeThrough(new DecompressionStream("gzip")); }

  // wasmBody resolves to a stream of app.wasm's bytes, uncompressed: from
  // the cache when this build is there, else from the network, keeping a
  // copy once the app has started (compressed when it came so: 4 MB to
  // write rather than 15); until then the copy's bytes wait in the tee.
  async function wasmBody(useCache) {
    var cache = null;
    if (cacheable) {
      try {
        cache = await caches.open(cacheName);
        var hit = useCache && window.DecompressionStream && await cache.match(gzKey);
        if (hit) {
          progress.source = "cache";
          cached = Promise.resolve(true);
          return gunzip(hit.body);
        }
        hit = useCache && await cache.match(key);
        if (hit) {
          progress.source = "cache";
          cached = Promise.resolve(true);
          return hit.body;
        }
      } catch (e) {
        cache = null; // storage refused (private mode, quota): load without it
      }
    }
    var got = await fromNetwork();
    var body = got.body;
    if (cache) {
      var two = body.tee(), copy = two[1], name = got.gz ? gzKey : key;
      body = two[0];
      cached = new Promise(function (resolve) {
        afterFirstFrame(function () { keep(cache, name, copy).then(resolve, function () { resolve(false); }); });
      });
    }
    return got.gz ? gunzip(body) : body;
  }

  async function compile(useCache) {
    progress.loaded = 0;
    var res = new Response(counted(await wasmBody(useCache)), { headers: { "Content-Type": "application/wasm" } });
    var mod = await (WebAssembly.compileStreaming
      ? WebAssembly.compileStreaming(res)
      : WebAssembly.compile(await res.arrayBuffer()));
    servelabMarks.compiled = performance.now();
    return mod;
  }

  if (window.WebAssembly && window.ReadableStream && window.TransformStream) {
    window.servelabModule = compile(true).catch(function (err) {
      if (progress.source !== "cache") throw err;
      // A cached copy that does not compile is dropped and fetched anew.
      return caches.open(cacheName).then(function (c) { return Promise.all([c.delete(key), c.delete(gzKey)]); })
        .then(function () { return compile(false); });
    });
    window.servelabModule.then(function () {
      progress.done = true;
      report();
    }, function () {});
  }

  // Until the app runs, the page shows the download's progress where the
  // canvas will be (#boot-progress, written by cmd/sitegen) and keeps the
  // controls that cannot act yet inert ([data-boot-inert]). The app
  // announces itself by setting window.servelab (ready); at that moment
  // the controls are released, before anything can wait on it.
  var lang = "en";
  try {
    var lq = new URLSearchParams(location.search).get("lang");
    lang = lq === "zh" || (lq !== "en" && /^zh/i.test(navigator.language || "")) ? "zh" : "en";
  } catch (e) { /* no URLSearchParams: English */ }
  var words = (self.servelabWords || {})[lang] || {};
  function word(k) { return words[k] || k; }
  var app;
  function started() {
    document.querySelectorAll("[data-boot-inert]").forEach(function (el) { el.removeAttribute("inert"); });
    var bp = document.getElementById("boot-progress");
    if (bp) bp.remove();
  }
  try {
    Object.defineProperty(window, "servelab", {
      configurable: true, enumerable: true,
      get: function () { return app; },
      set: function (v) { app = v; if (v && v.ready) started(); },
    });
  } catch (e) { /* a page that defined it already */ }
  function showProgress() {
    var bp = document.getElementById("boot-progress");
    if (!bp) return;
    if (lang !== "en") {
      bp.querySelector(".what").textContent = word("boot.loading");
      bp.querySelector(".waiting").textContent = word("boot.waiting");
      bp.querySelector("progress").setAttribute("aria-label", word("boot.loading").trim());
    }
    var bar = bp.querySelector("progress"), what = bp.querySelector(".what"), mb = bp.querySelector(".mb");
    var shown = -1;
    window.servelabProgress(function (p) {
      if (p.done) { what.textContent = word("boot.starting"); bar.removeAttribute("value"); mb.textContent = ""; return; }
      if (!p.total) return; // no size to compare with: the bar stays indeterminate
      var f = Math.min(1, p.loaded / p.total);
      if (f - bar.value < 0.01 && f < 1) return; // a step of 1% is enough to see
      bar.value = f;
      var tenth = Math.floor(f * 10); // the text moves in steps, for screen readers
      if (tenth !== shown) {
        shown = tenth;
        mb.textContent = word("boot.mb").replace("%.1f", (p.loaded / 1e6).toFixed(1)).replace("%.1f", (p.total / 1e6).toFixed(1));
      }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", showProgress);
  else showProgress();

  // servelabOffline settles true once sw.js is active and this build's wasm
  // is cached: from then on a reload works with the network off.
  window.servelabOffline = new Promise(function (resolve) {
    if (!cacheable) return resolve(false);
    window.addEventListener("load", function () {
      // updateViaCache "none": the browser checks version.js (imported by
      // sw.js) on each visit, so a new build installs a new worker.
      navigator.serviceWorker.register("sw.js", { updateViaCache: "none" })
        .then(function () { return navigator.serviceWorker.ready; })
        .then(function () { return window.servelabModule; })
        .then(function () { return cached; })
        .then(resolve, function () { resolve(false); });
    });
  });
})();
