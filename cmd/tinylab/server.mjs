// tinylab: the lab without a GPU. llama.cpp (node-llama-cpp's prebuilt CPU
// binary) runs a small random-weight Llama behind an OpenAI-compatible
// streaming front whose step loop schedules as vLLM does: every step carries
// one token for each decoding sequence plus pending prompt pieces, up to
// --max-num-batched-tokens (chunked prefill), or with
// --no-enable-chunked-prefill a prompt enters only whole. llama.cpp's own
// batching does not interleave a long prompt with running decodes (see
// ../../../shared/notes/real-engine.md), which is why the loop is ours.
//
//   node server.mjs --model tiny.gguf --port 8000 --max-num-batched-tokens 2048
//   node server.mjs --model tiny.gguf --port 8001 --no-enable-chunked-prefill
import http from "node:http";
import os from "node:os";
import {parseArgs} from "node:util";
import {getLlama, LlamaLogLevel, TokenBias} from "node-llama-cpp";

const usage = `usage: node server.mjs --model FILE.gguf [--port 8000] [--host 127.0.0.1]
  [--max-num-batched-tokens 2048 | --no-enable-chunked-prefill]
  [--max-num-seqs 20] [--max-model-len 10240] [--served-model-name tinylab] [--threads N]`;

function fail(msg) {
  console.error(`tinylab: ${msg}\n${usage}`);
  process.exit(2);
}

function intFlag(values, name, lo, hi) {
  const s = values[name];
  const n = Number(s);
  if (!/^\d+$/.test(String(s)) || n < lo || n > hi) fail(`--${name} ${s}: want an integer in ${lo}..${hi}`);
  return n;
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      "model": {type: "string"},
      "port": {type: "string", default: "8000"},
      "host": {type: "string", default: "127.0.0.1"},
      "max-num-batched-tokens": {type: "string", default: "2048"},
      "no-enable-chunked-prefill": {type: "boolean", default: false},
      "enable-chunked-prefill": {type: "boolean", default: false},
      "max-num-seqs": {type: "string", default: "20"},
      "max-model-len": {type: "string", default: "10240"},
      "served-model-name": {type: "string", default: "tinylab"},
      // One core is left to the front and the clients: llama.cpp's threads wait for
      // each other, so one preempted thread stalls the whole step.
      "threads": {type: "string", default: String(Math.max(1, os.availableParallelism() - 1))},
      "help": {type: "boolean", short: "h", default: false},
    },
  });
} catch (e) {
  fail(e.message);
}
const flags = parsed.values;
if (flags.help) {
  console.log(usage);
  process.exit(0);
}
if (!flags.model) fail("--model FILE.gguf is required (make tinylab writes one with `servelab gguf`)");
if (flags["no-enable-chunked-prefill"] && flags["enable-chunked-prefill"]) fail("--enable-chunked-prefill and --no-enable-chunked-prefill contradict each other");
const cfg = {
  port: intFlag(flags, "port", 0, 65535),
  host: flags.host,
  chunked: !flags["no-enable-chunked-prefill"],
  maxNumSeqs: intFlag(flags, "max-num-seqs", 1, 256),
  maxModelLen: intFlag(flags, "max-model-len", 64, 1 << 17),
  modelName: flags["served-model-name"],
  threads: intFlag(flags, "threads", 1, 1024),
};
cfg.budget = intFlag(flags, "max-num-batched-tokens", 1, 1 << 18);
if (cfg.chunked && cfg.budget < cfg.maxNumSeqs) fail(`--max-num-batched-tokens ${cfg.budget} is below --max-num-seqs ${cfg.maxNumSeqs}: a step could not carry every decode`);
if (!cfg.chunked) {
  // A prompt enters whole, so a step must hold the longest prompt beside every
  // running decode (vLLM requires max_num_batched_tokens >= max_model_len here).
  cfg.budget = Math.max(cfg.budget, cfg.maxModelLen + cfg.maxNumSeqs);
}

// The prebuilt CPU binary only: never a download or a compile at run time.
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
let model, context;
try {
  model = await llama.loadModel({modelPath: flags.model});
} catch (e) {
  fail(`--model ${flags.model}: ${e.message}`);
}
try {
  context = await model.createContext({
    sequences: cfg.maxNumSeqs,
    contextSize: cfg.maxModelLen,
    // A step's tokens go to llama.cpp in micro-batches of at most 512 (its
    // server's n_ubatch); node-llama-cpp sets n_ubatch to batchSize, and the
    // lab's long prompt in one 10k-token micro-batch took 1.3x as long as in
    // 512s (4.2-4.5 s against 3.1-3.5 s; its F32 attention mask alone is
    // ubatch x context), by a factor that changed from machine to machine.
    // A whole prompt is still one step: every stream waits for all of it.
    batchSize: Math.min(cfg.budget, 512),
    flashAttention: true,
    threads: cfg.threads,
  });
} catch (e) {
  fail(`a context of ${cfg.maxNumSeqs} sequences x ${cfg.maxModelLen} tokens: ${e.message} (lower --max-num-seqs or --max-model-len)`);
}
const slots = Array.from({length: cfg.maxNumSeqs}, () => context.getSequence());

// Generated tokens are restricted to ordinary text pieces, so every token is
// one frame with text (byte tokens alone may be half a UTF-8 character).
const bos = model.tokens.bos;
const eos = model.tokens.eos;
const vocabSize = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
const tokenTypes = model.fileInfo.metadata.tokenizer.ggml.token_type;
function makeBias(allowEOS) {
  const b = new TokenBias(model.tokenizer);
  for (let t = 0; t < vocabSize; t++) {
    if (t === eos ? !allowEOS : tokenTypes[t] !== 1) b.set(t, "never");
  }
  return b;
}
const biasWithEOS = makeBias(true);
const biasNoEOS = makeBias(false);

// ---------------------------------------------------------------- the step loop

const waiting = []; // FCFS: requests not yet holding a sequence
const running = []; // requests holding a sequence: prefilling or decoding
let wake = null;
const steps = []; // the last steps: {t, dur, decodes, prefill, seqs}
const t0 = performance.now();
const startedAt = Math.floor(Date.now() / 1000);
let nextID = 1;

function submit(req) {
  waiting.push(req);
  if (wake) {
    wake();
    wake = null;
  }
}

// schedule picks this step's work as vLLM's scheduler does: running requests
// first (one decode token each, or the next piece of their prompt), then
// waiting ones while a sequence and budget are left.
function schedule() {
  let left = cfg.budget;
  const work = [];
  for (const r of running) {
    if (left <= 0) break;
    if (r.done < r.prompt.length) {
      const n = Math.min(r.prompt.length - r.done, left);
      work.push({r, n, prefill: true});
      left -= n;
    } else {
      work.push({r, n: 1, prefill: false});
      left -= 1;
    }
  }
  while (waiting.length > 0 && running.length < cfg.maxNumSeqs && left > 0) {
    const r = waiting[0];
    if (!cfg.chunked && r.prompt.length > left) break;
    waiting.shift();
    r.seq = slots.pop();
    running.push(r);
    const n = Math.min(r.prompt.length, left);
    work.push({r, n, prefill: true});
    left -= n;
  }
  return work;
}

// run issues one piece of work; every call of a step is queued in the same
// event-loop turn, so node-llama-cpp packs them into one llama_decode.
async function run({r, n}) {
  if (r.done < r.prompt.length) {
    const piece = r.prompt.slice(r.done, r.done + n);
    r.done += n;
    if (r.done < r.prompt.length) {
      await r.seq.evaluateWithoutGeneratingNewTokens(piece);
      return null;
    }
    r.gen = r.seq.evaluate(piece, {temperature: r.temperature, tokenBias: r.ignoreEOS ? biasNoEOS : biasWithEOS});
  }
  const {value, done} = await r.gen.next();
  return done ? eos : value;
}

async function finish(r) {
  const i = running.indexOf(r);
  if (i >= 0) running.splice(i, 1);
  if (r.gen) await r.gen.return();
  r.gen = null;
  if (r.seq) {
    await r.seq.clearHistory();
    slots.push(r.seq);
    r.seq = null;
  }
}

async function loop() {
  for (;;) {
    // Requests whose client left free their sequence before the next step.
    for (const r of [...running]) if (r.aborted) await finish(r);
    for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].aborted) waiting.splice(i, 1);
    if (running.length === 0 && waiting.length === 0) {
      await new Promise((resolve) => (wake = resolve));
      continue;
    }
    const work = schedule();
    const start = performance.now();
    let results;
    try {
      results = await Promise.all(work.map(run));
    } catch (e) {
      // The engine failed: every request in this step gets an error frame.
      console.error(`tinylab: step failed: ${e.message}`);
      for (const {r} of work) {
        r.onError(`engine error: ${e.message}`);
        await finish(r);
      }
      continue;
    }
    const end = performance.now();
    let decodes = 0, prefill = 0, piece = 0;
    for (const w of work) {
      if (w.prefill) {
        prefill += w.n;
        piece = Math.max(piece, w.n);
      } else decodes++;
    }
    steps.push({t: (start - t0) / 1000, dur: (end - start) / 1000, decodes, prefill, piece, seqs: work.length});
    if (steps.length > 20000) steps.splice(0, 10000);
    const ended = [];
    work.forEach(({r}, i) => {
      const tok = results[i];
      if (tok === null || r.aborted) return;
      if (tok === eos && !r.ignoreEOS) {
        r.onEnd("stop");
        ended.push(r);
        return;
      }
      const text = model.detokenize([tok], false, r.out.slice(-4));
      r.out.push(tok);
      r.onToken(text);
      if (r.out.length >= r.maxTokens) {
        r.onEnd("length");
        ended.push(r);
      }
    });
    for (const r of ended) await finish(r);
  }
}

// ---------------------------------------------------------------- HTTP

function sendJSON(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(body)});
  res.end(body);
}

// sendError answers in OpenAI's error shape.
function sendError(res, status, message, param = null) {
  const type = status === 404 ? "NotFoundError" : status >= 500 ? "InternalServerError" : "BadRequestError";
  sendJSON(res, status, {error: {message, type, param, code: status}});
}

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// chatPrompt renders messages in a plain template: the model is random, only
// the token count matters.
function chatPrompt(messages) {
  return messages.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : (m.content || []).map((p) => p.text || "").join("")}`).join("\n") + "\nassistant:";
}

// validate turns an OpenAI request body into the engine's request, or says
// which field is wrong.
function validate(body, chat) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return {err: "the body must be a JSON object"};
  let text;
  if (chat) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) return {err: "messages: want a non-empty array", param: "messages"};
    for (const m of body.messages) {
      if (!m || typeof m.role !== "string") return {err: "messages: every message needs a role", param: "messages"};
    }
    text = chatPrompt(body.messages);
  } else {
    let p = body.prompt;
    if (Array.isArray(p) && p.length === 1 && typeof p[0] === "string") p = p[0];
    if (typeof p !== "string") return {err: "prompt: want a string", param: "prompt"};
    text = p;
  }
  if (body.model !== undefined && body.model !== cfg.modelName) return {err: `The model \`${body.model}\` does not exist.`, param: "model", status: 404};
  const maxTokens = body.max_tokens ?? body.max_completion_tokens ?? 16;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) return {err: `max_tokens ${JSON.stringify(maxTokens)}: want an integer >= 1`, param: "max_tokens"};
  const temperature = body.temperature ?? 1;
  if (typeof temperature !== "number" || temperature < 0 || temperature > 2) return {err: `temperature ${JSON.stringify(temperature)}: want a number in 0..2`, param: "temperature"};
  if (body.n !== undefined && body.n !== 1) return {err: "n: only 1 is supported", param: "n"};
  const prompt = [bos, ...model.tokenize(text)];
  if (prompt.length + maxTokens > cfg.maxModelLen) {
    return {
      err: `This model's maximum context length is ${cfg.maxModelLen} tokens. However, you requested ${prompt.length + maxTokens} tokens (${prompt.length} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
      param: "max_tokens",
    };
  }
  const so = body.stream_options || {};
  return {
    prompt, maxTokens, temperature,
    stream: body.stream === true,
    ignoreEOS: body.ignore_eos === true,
    usage: so.include_usage === true,
    continuousUsage: so.continuous_usage_stats === true,
  };
}

async function completions(req, res, chat) {
  let body;
  try {
    body = JSON.parse(await readBody(req, 8 << 20));
  } catch (e) {
    return sendError(res, 400, `the body is not JSON: ${e.message}`);
  }
  const v = validate(body, chat);
  if (v.err) return sendError(res, v.status || 400, v.err, v.param || null);

  const id = `${chat ? "chatcmpl" : "cmpl"}-${nextID++}`;
  const created = Math.floor(Date.now() / 1000);
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const r = {...v, done: 0, out: [], seq: null, gen: null, aborted: false};
  const usage = () => ({prompt_tokens: r.prompt.length, completion_tokens: r.out.length, total_tokens: r.prompt.length + r.out.length});
  const choice = (text, finish) => chat
    ? {index: 0, delta: text === null ? {} : {content: text}, logprobs: null, finish_reason: finish}
    : {index: 0, text: text ?? "", logprobs: null, finish_reason: finish};
  const frame = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  const chunk = (choices, withUsage) => {
    const c = {id, object, created, model: cfg.modelName, choices};
    if (withUsage) c.usage = usage();
    return c;
  };
  let texts = [];
  const ended = new Promise((resolve) => {
    r.onToken = (text) => {
      if (r.stream) frame(chunk([choice(text, null)], r.continuousUsage));
      else texts.push(text);
    };
    r.onEnd = (reason) => resolve({reason});
    r.onError = (message) => resolve({error: message});
  });
  res.on("close", () => {
    if (!res.writableFinished) r.aborted = true;
  });

  if (r.stream) {
    res.writeHead(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive"});
    res.flushHeaders();
    if (chat) frame(chunk([{index: 0, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}], r.continuousUsage));
  }
  submit(r);
  const end = await ended;
  if (r.aborted) return;
  if (end.error) {
    if (r.stream) {
      frame({error: {message: end.error, type: "InternalServerError", param: null, code: 500}});
      res.end("data: [DONE]\n\n");
    } else sendError(res, 500, end.error);
    return;
  }
  if (r.stream) {
    frame(chunk([choice(null, end.reason)], r.continuousUsage));
    if (r.usage) frame(chunk([], true));
    res.end("data: [DONE]\n\n");
    return;
  }
  const text = texts.join("");
  sendJSON(res, 200, {
    id, object: chat ? "chat.completion" : "text_completion", created, model: cfg.modelName,
    choices: [chat
      ? {index: 0, message: {role: "assistant", content: text}, logprobs: null, finish_reason: end.reason}
      : {index: 0, text, logprobs: null, finish_reason: end.reason}],
    usage: usage(),
  });
}

const server = http.createServer((req, res) => {
  const path = req.url.split("?")[0];
  if (req.method === "GET" && path === "/v1/models") {
    return sendJSON(res, 200, {object: "list", data: [{id: cfg.modelName, object: "model", created: startedAt, owned_by: "servelab", max_model_len: cfg.maxModelLen}]});
  }
  if (req.method === "GET" && (path === "/health" || path === "/v1/health")) return sendJSON(res, 200, {ok: true});
  // The engine's own record of its recent steps: start and duration (s), decode
  // tokens and prefill tokens carried, the most of one prompt among them (piece).
  // What a profile is fitted to, step by step.
  if (req.method === "GET" && path === "/tinylab/steps") {
    return sendJSON(res, 200, {config: {chunked: cfg.chunked, max_num_batched_tokens: cfg.budget, max_num_seqs: cfg.maxNumSeqs, max_model_len: cfg.maxModelLen, threads: cfg.threads}, steps});
  }
  if (path === "/v1/completions" || path === "/v1/chat/completions") {
    if (req.method !== "POST") return sendError(res, 405, `${req.method} ${path}: use POST`);
    completions(req, res, path === "/v1/chat/completions").catch((e) => {
      console.error(`tinylab: ${e.stack || e}`);
      if (!res.headersSent) sendError(res, 500, String(e.message || e));
      else res.end();
    });
    return;
  }
  sendError(res, 404, `no route ${req.method} ${path}`);
});
server.keepAliveTimeout = 60000;
server.on("error", (e) => {
  console.error(`tinylab: ${e.message}`);
  process.exit(1);
});
server.listen(cfg.port, cfg.host, () => {
  const mode = cfg.chunked
    ? `Chunked prefill is enabled with max_num_batched_tokens=${cfg.budget}`
    : `chunked prefill off: a prompt enters whole (max_num_batched_tokens=${cfg.budget})`;
  console.log(`tinylab: ${cfg.modelName} (${flags.model}) on http://${cfg.host}:${server.address().port}; ${mode}; max_num_seqs=${cfg.maxNumSeqs}, max_model_len=${cfg.maxModelLen}, ${cfg.threads} threads`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
loop().catch((e) => {
  console.error(`tinylab: the step loop died: ${e.stack || e}`);
  process.exit(1);
});
