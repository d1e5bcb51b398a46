// The service worker that keeps the playground working offline after one
// visit. Its cache is named after the build (version.js, written by
// `make wasm`); the browser re-checks version.js on every visit (load.js
// registers with updateViaCache "none"), so a new build installs a new
// worker, which drops the old build's cache.
//
// The site's files are fetched network first: online, a reload always gets
// the newest page, and the copy kept is refreshed; with the network off the
// copy is served. app.wasm is not handled here: load.js keeps it in the same
// cache itself (it knows which variant the host sends, and the first visit
// is not yet controlled by this worker). The API (the companion, the edge
// proxy, their streams) is never cached.
"use strict";

try {
  importScripts("version.js");
} catch (e) {
  // No build yet: this worker caches nothing.
}
var build = self.servelabBuild;
var CACHE = build ? "servelab-" + build.version : "";
// The page, its frame and everything they load; "./" is index.html.
var SHELL = ["./", "canvas.html", "style.css", "favicon.svg", "version.js", "load.js", "app.js", "wasm_exec.js", "stream-worker.js"];
var scope = new URL("./", self.location).pathname;

self.addEventListener("install", function (e) {
  if (!CACHE) return;
  // Where the browser can (Chromium), the API and app.wasm bypass this worker
  // altogether, so that no request of a live measurement waits for it to
  // wake; the probes still come here, for their offline answer. Elsewhere the
  // fetch handler below lets the same requests through.
  if (e.addRoutes && self.URLPattern) {
    try {
      var path = function (p) { return { urlPattern: new URLPattern({ pathname: scope + p }) }; };
      e.waitUntil(e.addRoutes([
        { condition: path("api/health"), source: "fetch-event" },
        { condition: path("api/info"), source: "fetch-event" },
        { condition: path("api/*"), source: "network" },
        { condition: path("app.wasm*"), source: "network" },
      ]).catch(function () {}));
    } catch (err) { /* an older form of the API: the fetch handler serves */ }
  }
  e.waitUntil(caches.open(CACHE)
    .then(function (c) { return c.addAll(SHELL.map(function (u) { return new Request(u, { cache: "no-cache" }); })); })
    .then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (e) {
  e.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("servelab-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }));
});

// The page's probes for a companion or an edge proxy: offline, the answer
// is "neither", as a static host's api/health and api/info files say.
function noAPI() {
  return new Response('{"ok": false, "offline": true}\n', { headers: { "Content-Type": "application/json" } });
}

self.addEventListener("fetch", function (e) {
  var req = e.request;
  var url = new URL(req.url);
  if (!CACHE || req.method !== "GET" || url.origin !== self.location.origin || url.pathname.indexOf(scope) !== 0) return;
  var path = url.pathname.slice(scope.length);
  if (path === "api/health" || path === "api/info") {
    e.respondWith(fetch(req).catch(noAPI));
    return;
  }
  if (path.indexOf("api/") === 0 || path.indexOf("app.wasm") === 0) return;
  e.respondWith(networkFirst(e, url));
});

function networkFirst(e, url) {
  var req = e.request;
  // A navigation is kept under its path: ?preset=... links share one copy.
  var key = req.mode === "navigate" ? url.origin + url.pathname : req;
  // Revalidate: a static host's Last-Modified alone lets the HTTP cache
  // answer with an old file. (A navigation cannot be rebuilt with options.)
  var fresh = req.mode === "navigate" ? req : new Request(req, { cache: "no-cache" });
  return fetch(fresh).then(function (r) {
    if (r.ok && r.type === "basic") {
      var copy = r.clone();
      // The worker stays up until the copy is written; a failed write loses
      // only the copy. A cache a newer build has dropped is not made anew.
      e.waitUntil(caches.has(CACHE).then(function (has) {
        return has && caches.open(CACHE).then(function (c) { return c.put(key, copy); });
      }).catch(function () {}));
    }
    return r;
  }, function (err) {
    return caches.open(CACHE).then(function (c) {
      return c.match(key, { ignoreSearch: true }).then(function (hit) {
        // A page under another name (/index.html) is the page; the frame
        // (canvas.html) matched above under its own name.
        if (!hit && req.mode === "navigate" && req.destination === "document") return c.match("./");
        return hit;
      });
    }).then(function (hit) {
      if (hit) return hit;
      throw err;
    });
  });
}
