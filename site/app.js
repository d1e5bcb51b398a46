// Loads app.wasm into the timeline frame. The Go program reaches the
// controls page through window.parent and sets window.servelab there.
(function () {
  "use strict";
  var boot = document.getElementById("boot");
  // The words shown before the simulator runs: the catalogues' boot.* keys,
  // which cmd/sitegen writes into canvas.html as self.servelabWords.
  var lang = "en";
  try {
    var q = new URLSearchParams((window.parent !== window ? window.parent : window).location.search).get("lang");
    lang = q === "zh" || (q !== "en" && /^zh/i.test(navigator.language || "")) ? "zh" : "en";
  } catch (e) { /* not same-origin: the browser's language */
    lang = /^zh/i.test(navigator.language || "") ? "zh" : "en";
  }
  var all = self.servelabWords || {};
  var mine = all[lang] || all.en || {};
  var w = {};
  ["loading", "starting", "noexec", "nowasm", "stopped", "failed"].forEach(function (k) { w[k] = mine["boot." + k] || "boot." + k; });
  function fail(msg) {
    boot.textContent = msg;
    try {
      var m = window.parent.document.getElementById("message");
      if (m) { m.textContent = msg; m.className = "error"; m.hidden = false; }
    } catch (e) { /* not same-origin: the frame's own message is enough */ }
  }
  if (typeof Go === "undefined") {
    fail(w.noexec);
    return;
  }
  if (!window.WebAssembly) {
    fail(w.nowasm);
    return;
  }
  var go = new Go();
  var t0 = performance.now();
  function fromScratch() {
    return WebAssembly.instantiateStreaming
      ? WebAssembly.instantiateStreaming(fetch("app.wasm"), go.importObject).then(function (r) { return r.instance; })
      : fetch("app.wasm").then(function (r) { return r.arrayBuffer(); })
          .then(function (b) { return WebAssembly.instantiate(b, go.importObject); })
          .then(function (r) { return r.instance; });
  }
  // The controls page starts loading and compiling app.wasm while this frame
  // loads (window.servelabModule, load.js); use that module when it is there.
  // Only a frame opened on its own fetches app.wasm itself.
  var early = null;
  try { early = window.parent !== window && window.parent.servelabModule; } catch (e) { early = null; }
  var load = early
    ? early.then(function (mod) { return WebAssembly.instantiate(mod, go.importObject); })
    : fromScratch();
  // How far the download is, while it lasts.
  var bar = document.createElement("progress");
  bar.max = 1;
  bar.setAttribute("aria-label", w.loading.trim());
  boot.textContent = w.loading;
  boot.appendChild(bar);
  var shown = -1;
  try {
    if (early && window.parent.servelabProgress) {
      window.parent.servelabProgress(function (p) {
        if (!p.total) return; // no size to compare with: the bar stays indeterminate
        var f = Math.min(1, p.loaded / p.total);
        if (f - bar.value < 0.01 && f < 1) return; // a step of 1% is enough to see
        bar.value = f;
        var pct = Math.floor(f * 10) * 10; // the text moves in steps, for screen readers
        if (pct !== shown && !p.done) {
          shown = pct;
          boot.firstChild.textContent = f < 1 ? w.loading + pct + "% " : w.starting;
        }
      });
    }
  } catch (e) { /* not same-origin: the bar stays indeterminate */ }
  function mark(name) {
    try { var p = window.parent; if (p.servelabMarks) p.servelabMarks[name] = p.performance.now(); } catch (e) { /* not same-origin */ }
  }
  mark("frame");
  load.then(function (instance) {
    mark("instantiated");
    boot.remove();
    window.servelabLoadMs = performance.now() - t0;
    return go.run(instance);
  }).then(function () {
    fail(w.stopped);
  }).catch(function (err) {
    fail(w.failed.replace("%s", String(err)));
  });
})();
