// Reads the live mode's token streams (the lab's closed loop, run by the
// page through the edge proxy) off the page's main thread. Each chunk is
// stamped the moment this worker receives it; on the main thread the stamp
// would wait for whatever the page was drawing. The page runs the loop and
// parses the frames: this only fetches, reads and stamps.
//
// In:  {id, gen, url, body} starts a request; {abort: id} aborts one.
// Out: {id, gen, t, chunk} per chunk read, then {id, gen, end, status} with
//      text (a non-200 answer's body), error, or aborted. Times are
//      performance.timeOrigin + performance.now(): comparable across contexts.
"use strict";

var inFlight = new Map(); // id -> AbortController

function now() { return performance.timeOrigin + performance.now(); }

onmessage = function (e) {
  var m = e.data;
  if (m.abort !== undefined) {
    var c = inFlight.get(m.abort);
    if (c) c.abort();
    return;
  }
  stream(m);
};

async function stream(m) {
  var ctrl = new AbortController();
  inFlight.set(m.id, ctrl);
  var status = 0;
  function end(extra) {
    inFlight.delete(m.id);
    var out = { id: m.id, gen: m.gen, end: now(), status: status };
    for (var k in extra) out[k] = extra[k];
    postMessage(out);
  }
  try {
    var resp = await fetch(m.url, {
      method: "POST", cache: "no-store", signal: ctrl.signal, body: m.body,
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
    });
    status = resp.status;
    if (status !== 200) {
      end({ text: await resp.text() });
      return;
    }
    if (!resp.body) {
      end({ error: "the answer has no body to stream" });
      return;
    }
    var reader = resp.body.getReader();
    for (;;) {
      var r = await reader.read();
      var t = now();
      if (r.done) {
        end({});
        return;
      }
      postMessage({ id: m.id, gen: m.gen, t: t, chunk: r.value }, [r.value.buffer]);
    }
  } catch (err) {
    end(ctrl.signal.aborted ? { aborted: true } : { error: String(err) });
  }
}
