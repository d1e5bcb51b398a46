// edge.mjs is the worker's entry module (wrangler's "main"). It wraps the
// worker.mjs that github.com/syumai/workers generates, for two things Go
// cannot do there:
//
// 1. Rate-limit state. Each request runs in a fresh Go instance, so nothing
//    in Go memory survives it; this module's scope lives as long as the
//    isolate and serves every request that isolate handles. The token-bucket
//    arithmetic stays in Go (cmd/internal/proxy); this only stores buckets.
// 2. Static files. They come from the ASSETS binding (wrangler's assets
//    directory on Cloudflare, a disk service under workerd) and are streamed
//    straight through, never copied through Go. A pre-compressed NAME.br or
//    NAME.gz is sent as is (encodeBody: "manual"), like site.Handler does
//    for `servelab serve`.
import worker from "./worker.mjs";

const MAX_CLIENTS = 10000; // oldest buckets are dropped past this
const buckets = new Map(); // key -> [tokens, lastUnixMilli], least recently used first

globalThis.servelabRateStore = {
  get(key) {
    const b = buckets.get(key);
    if (b !== undefined) {
      buckets.delete(key);
      buckets.set(key, b);
    }
    return b;
  },
  set(key, tokens, last) {
    buckets.delete(key);
    buckets.set(key, [tokens, last]);
    if (buckets.size > MAX_CLIENTS) {
      buckets.delete(buckets.keys().next().value);
    }
  },
};

// The types site.Handler serves; any other file is not served.
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
};
const ENCODINGS = [["br", ".br"], ["gzip", ".gz"]];

function jsonError(status, code, message) {
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", code } });
  return new Response(body + "\n", {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
  });
}

function accepts(header, token) {
  for (const part of header.split(",")) {
    const [name, ...params] = part.split(";").map((s) => s.trim());
    if (name.toLowerCase() !== token) continue;
    return !params.some((p) => /^q=0(\.0*)?$/.test(p.replace(/\s/g, "")));
  }
  return false;
}

async function serveStatic(request, env) {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return jsonError(405, "method_not_allowed", "use GET for static files");
  }
  const url = new URL(request.url);
  let name = url.pathname;
  if (name.endsWith("/")) name += "index.html";
  const type = TYPES[name.slice(name.lastIndexOf("."))];
  // The site's file names are plain: anything else (encoded characters,
  // "..", "//") is not one of them.
  if (!type || !/^(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)+$/.test(name) || name.includes("..") || !env.ASSETS) {
    return jsonError(404, "not_found", "not found");
  }
  const ae = request.headers.get("Accept-Encoding") || "";
  const tries = ENCODINGS.filter(([token]) => accepts(ae, token));
  tries.push([null, ""]);
  for (const [encoding, suffix] of tries) {
    const r = await env.ASSETS.fetch(url.origin + name + suffix);
    if (!r.ok) {
      await r.body?.cancel();
      continue;
    }
    const headers = new Headers({
      "Content-Type": type,
      "Cache-Control": "no-cache", // a rebuilt app.wasm must never meet a stale page
      "Vary": "Accept-Encoding",
      "X-Content-Type-Options": "nosniff",
    });
    if (encoding) headers.set("Content-Encoding", encoding);
    const len = r.headers.get("Content-Length");
    if (len) headers.set("Content-Length", len);
    let body = r.body;
    if (request.method === "HEAD") {
      await r.body?.cancel();
      body = null;
    }
    return new Response(body, { status: 200, headers, encodeBody: encoding ? "manual" : "automatic" });
  }
  // A file too big for the assets store (25 MiB) is uploaded only
  // compressed; a client that takes neither br nor gzip gets it unpacked here.
  if (!accepts(ae, "gzip")) {
    const r = await env.ASSETS.fetch(url.origin + name + ".gz");
    if (r.ok) {
      let body = null;
      if (request.method === "HEAD") await r.body?.cancel();
      else body = r.body.pipeThrough(new DecompressionStream("gzip"));
      return new Response(body, {
        status: 200,
        headers: { "Content-Type": type, "Cache-Control": "no-cache", "Vary": "Accept-Encoding", "X-Content-Type-Options": "nosniff" },
      });
    }
    await r.body?.cancel();
  }
  return jsonError(404, "not_found", "not found");
}

export default {
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    if (path === "/api/health") {
      // The page probes for `servelab serve`'s companion first; the edge has
      // none, and says so instead of a 404 (which the console shows as an error).
      return new Response('{"ok": false, "companion": false}\n', {
        headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
      });
    }
    if (path === "/api" || path.startsWith("/api/")) {
      return worker.fetch(request, env, ctx);
    }
    return serveStatic(request, env);
  },
};
