#!/usr/bin/env python3
"""Writes the small benchmark-tool fixtures in this folder (stdlib only).

One synthetic streamed run (seeded) is written in each tool's own file
layout, field names and units, and each file's summary figures are computed
the way that tool's source computes them: numpy's linear percentiles for
vLLM, SGLang, AIPerf and GenAI-Perf, pandas' (also linear) for llmperf, and
GuideLLM's weighted "first value whose CDF reaches p". The Go readers are
tested against those stated figures. Run: python3 make_fixtures.py
"""
import json, math, os, random

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(13)


def pct(xs, p):  # numpy.percentile / pandas.quantile, linear
    s = sorted(xs)
    if not s:
        return 0.0
    pos = p / 100 * (len(s) - 1)
    lo = math.floor(pos)
    if lo >= len(s) - 1:
        return s[-1]
    return s[lo] + (s[lo + 1] - s[lo]) * (pos - lo)


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def std(xs):
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs)) if xs else 0.0


def cdf_pct(values, weights, p):  # GuideLLM: np.unique merge, cumsum, searchsorted left
    pairs = sorted(zip(values, weights))
    vals, ws = [], []
    for v, w in pairs:
        if vals and vals[-1] == v:
            ws[-1] += w
        else:
            vals.append(v)
            ws.append(w)
    ws_nz = [(v, w) for v, w in zip(vals, ws) if w > 0]
    total = sum(w for _, w in ws_nz)
    cum = 0.0
    for v, w in ws_nz:
        cum += w / total
        if cum >= p:
            return v
    return ws_nz[-1][0]


def make_run(n, rate, chunky, seed, out_max=40):
    """Requests with start, prompt, output, chunk sizes and chunk times."""
    r = random.Random(seed)
    t = 1764582000.0 + seed  # a Unix time, as wall-clock tools write
    reqs = []
    for i in range(n):
        t += r.expovariate(rate)
        prompt = r.randint(100, 900)
        out = r.randint(6, out_max)
        ttft = 0.02 + prompt * 0.00012 + r.random() * 0.05
        sizes = [1]
        left = out - 1
        while left > 0:
            k = min(left, r.choice([1, 1, 2, 3]) if chunky else 1)
            sizes.append(k)
            left -= k
        times = [ttft]
        for k in sizes[1:]:
            gap = k * (0.011 + r.random() * 0.006)
            if r.random() < 0.05:
                gap += 0.15  # a stall, as a long prefill causes
            times.append(times[-1] + gap)
        reqs.append(dict(start=t, prompt=prompt, out=out, sizes=sizes, times=times, error=""))
    # One failed request, as the tools record one.
    reqs[n // 2] = dict(start=reqs[n // 2]["start"], prompt=reqs[n // 2]["prompt"], out=0, sizes=[], times=[],
                        error="ClientResponseError: 503 Service Unavailable")
    return reqs


def ok(reqs):
    return [q for q in reqs if not q["error"]]


def gaps(q):
    return [b - a for a, b in zip(q["times"], q["times"][1:])]


def write(name, obj, lines=False):
    path = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        if lines:
            for o in obj:
                f.write(json.dumps(o) + "\n")
        else:
            json.dump(obj, f, indent=1)
            f.write("\n")


def vllm_like_summary(reqs, names):
    """vLLM's / SGLang's calculate_metrics over successful requests (s -> ms)."""
    good = ok(reqs)
    ttfts = [q["times"][0] for q in good]
    lat = [q["times"][-1] for q in good]
    tpots = [(q["times"][-1] - q["times"][0]) / (q["out"] - 1) for q in good if q["out"] > 1]
    itls = [g for q in good for g in gaps(q)]
    out = {}
    for key, xs in ((names[0], ttfts), (names[1], tpots), (names[2], itls), (names[3], lat)):
        out[f"mean_{key}_ms"] = mean(xs) * 1000
        out[f"median_{key}_ms"] = pct(xs, 50) * 1000
        out[f"std_{key}_ms"] = std(xs) * 1000
        out[f"p99_{key}_ms"] = pct(xs, 99) * 1000
    return out


def details(reqs, with_starts):
    d = {  # vLLM's and SGLang's per-request arrays (vLLM adds latencies and start_times)
        "input_lens": [q["prompt"] for q in reqs],
        "output_lens": [q["out"] for q in reqs],
        "ttfts": [q["times"][0] if q["times"] else 0.0 for q in reqs],
        "itls": [gaps(q) for q in reqs],
        "generated_texts": ["x" * q["out"] for q in reqs],
        "errors": [q["error"] for q in reqs],
    }
    if with_starts:  # newer vLLM: a monotonic clock, any origin
        d["start_times"] = [q["start"] - 1764000000.0 for q in reqs]
    return d


# vLLM bench serve --save-result --save-detailed (newer: start_times).
run = make_run(30, 6.0, True, 1)
good = ok(run)
dur = max(q["start"] + (q["times"][-1] if q["times"] else 0) for q in run) - run[0]["start"]
v = {"date": "20261201-090000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
     "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": len(run), "request_rate": 6.0,
     "burstiness": 1.0, "max_concurrency": None, "duration": dur, "completed": len(good), "failed": 1,
     "total_input_tokens": sum(q["prompt"] for q in good), "total_output_tokens": sum(q["out"] for q in good),
     "request_throughput": len(good) / dur, "output_throughput": sum(q["out"] for q in good) / dur}
v.update(vllm_like_summary(run, ("ttft", "tpot", "itl", "e2el")))
for key, xs in (("ttft", [q["times"][0] for q in good]), ("itl", [g for q in good for g in gaps(q)])):
    v[f"p90_{key}_ms"] = pct(xs, 90) * 1000  # --metric-percentiles 90,99
v.update(details(run, True))
v["latencies"] = [q["times"][-1] if q["times"] else 0.0 for q in run]  # vllm bench serve's name
write("vllm.json", v)

# SGLang bench_serving --output-details: two runs appended, the second at an
# unlimited rate (Python writes the bare literal Infinity).
lines = []
for rate, seed in ((4.0, 2), (float("inf"), 3)):
    run = make_run(20, 4.0 if rate == float("inf") else rate, True, seed)
    good = ok(run)
    dur = max(q["start"] + (q["times"][-1] if q["times"] else 0) for q in run) - run[0]["start"]
    res = {"backend": "sglang-oai", "dataset_name": "random", "request_rate": rate, "max_concurrency": None,
           "sharegpt_output_len": None, "random_input_len": 512, "random_output_len": 32, "random_range_ratio": 0.0,
           "duration": dur, "completed": len(good), "total_input_tokens": sum(q["prompt"] for q in good),
           "total_output_tokens": sum(q["out"] for q in good), "total_output_tokens_retokenized": sum(q["out"] for q in good),
           "request_throughput": len(good) / dur, "input_throughput": 0, "output_throughput": 0}
    s = vllm_like_summary(run, ("ttft", "tpot", "itl", "e2e_latency"))
    res.update({k: s[k] for k in s})
    res["p95_itl_ms"] = pct([g for q in good for g in gaps(q)], 95) * 1000
    res["concurrency"] = sum(q["times"][-1] for q in good) / dur
    res["accept_length"] = None
    res.update(details(run, False))
    lines.append(res)
write("sglang.jsonl", lines, lines=True)


# GuideLLM benchmarks.json, v0.4+ generation: info.timings, computed fields.
def guide_dist(values, weights=None):
    if weights is None:
        weights = [1.0] * len(values)
    d = {"mean": sum(v * w for v, w in zip(values, weights)) / sum(weights),
         "median": cdf_pct(values, weights, 0.5), "mode": 0, "variance": 0, "std_dev": 0,
         "min": min(values), "max": max(values), "count": len(values), "total_sum": sum(values),
         "percentiles": {k: cdf_pct(values, weights, p) for k, p in
                         (("p001", .001), ("p01", .01), ("p05", .05), ("p10", .1), ("p25", .25), ("p50", .5),
                          ("p75", .75), ("p90", .9), ("p95", .95), ("p99", .99), ("p999", .999))}}
    return {"successful": d, "incomplete": None, "errored": None, "total": d}


def guide_bench(run, strategy, new):
    good = ok(run)
    reqs, errs = [], []
    for i, q in enumerate(run):
        st = q["start"]
        if q["error"]:
            item = {"request_id": f"r{i}", "info": {"timings": {"request_start": st, "request_end": st + 0.01},
                                                    "error": q["error"]}, "prompt_tokens": q["prompt"], "output_tokens": None}
            errs.append(item)
            continue
        first, last = st + q["times"][0], st + q["times"][-1]
        end = last + 0.0004
        stats = {"request_id": f"r{i}", "prompt_tokens": q["prompt"], "output_tokens": q["out"],
                 "time_to_first_token_ms": 1000 * (first - st),
                 "inter_token_latency_ms": 1000 * (last - first) / (q["out"] - 1),
                 "time_per_output_token_ms": 1000 * (last - st) / q["out"], "request_latency": end - st}
        if new:
            stats["info"] = {"timings": {"request_start": st, "first_token_iteration": first,
                                         "last_token_iteration": last, "token_iterations": len(q["sizes"]),
                                         "request_end": end}, "error": None}
            stats["input_metrics"] = {"text_tokens": q["prompt"], "total_tokens": q["prompt"]}
            stats["output_metrics"] = {"text_tokens": q["out"], "total_tokens": q["out"]}
        else:
            stats.update({"start_time": st, "end_time": end, "first_token_time": first, "last_token_time": last,
                          "scheduler_info": {"requested": True, "completed": True, "errored": False,
                                             "canceled": False, "request_start": st}})
        reqs.append(stats)
    metrics = {
        "time_to_first_token_ms": guide_dist([r["time_to_first_token_ms"] for r in reqs]),
        "inter_token_latency_ms": guide_dist([r["inter_token_latency_ms"] for r in reqs],
                                             [r["output_tokens"] - 1 for r in reqs]),
        "request_latency": guide_dist([r["request_latency"] for r in reqs]),
    }
    b = {"type_": "generative_benchmark", "metrics": metrics,
         "requests": {"successful": reqs, "incomplete": [], "errored": errs},
         "start_time": run[0]["start"], "end_time": max(r["request_latency"] + (r["info"]["timings"]["request_start"] if new else r["start_time"]) for r in reqs)}
    b["duration"] = b["end_time"] - b["start_time"]
    if new:
        metrics["request_totals"] = {"successful": len(reqs), "incomplete": 0, "errored": len(errs), "total": len(run)}
        b["config"] = {"strategy": strategy}
    else:
        b["request_totals"] = {"successful": len(reqs), "incomplete": 0, "errored": len(errs), "total": len(run)}
        b["args"] = {"strategy": strategy}
    return b


write("guidellm.json", {"metadata": {"version": 1, "guidellm_version": "0.4.0"}, "benchmarks": [
    guide_bench(make_run(24, 5.0, True, 4), {"type_": "concurrent", "streams": 8}, True),
    guide_bench(make_run(24, 3.0, True, 5), {"type_": "constant", "rate": 3.0}, True)]})
write("guidellm_v02.json", {"benchmarks": [
    guide_bench(make_run(24, 5.0, True, 6), {"type_": "poisson", "rate": 5.0}, False)]})

# AIPerf: profile_export.jsonl, profile_export_raw.jsonl, profile_export_aiperf.json.
run = make_run(16, 8.0, True, 7, out_max=24)
recs, raws = [], []
for i, q in enumerate(run):
    st_ns = int(q["start"] * 1e9)
    perf0 = 5_000_000_000 + i * 1_000_000_000  # perf_counter_ns, any origin
    meta = {"session_num": i, "x_request_id": f"id-{i}", "x_correlation_id": f"c-{i}", "conversation_id": f"conv-{i}",
            "turn_index": 0, "request_start_ns": st_ns, "request_ack_ns": None, "request_end_ns": None,
            "worker_id": "worker_1", "record_processor_id": "rp_1", "benchmark_phase": "profiling",
            "was_cancelled": False, "cancellation_time_ns": None}
    if q["error"]:
        meta["request_end_ns"] = st_ns + 5_000_000
        recs.append({"metadata": meta, "metrics": {"error_isl": {"value": q["prompt"], "unit": "tokens"}},
                     "error": {"code": 503, "type": "HTTPError", "message": q["error"]}})
        raws.append({"metadata": meta, "start_perf_ns": perf0, "payload": {"max_tokens": 32}, "status": 503,
                     "responses": [], "error": {"code": 503, "type": "HTTPError", "message": q["error"]}})
        continue
    meta["request_ack_ns"] = st_ns + 2_000_000
    meta["request_end_ns"] = st_ns + int(q["times"][-1] * 1e9)
    ttft, lat = q["times"][0] * 1000, q["times"][-1] * 1000
    m = {"input_sequence_length": {"value": q["prompt"], "unit": "tokens"},
         "time_to_first_token": {"value": ttft, "unit": "ms"},
         "request_latency": {"value": lat, "unit": "ms"},
         "inter_chunk_latency": {"value": [g * 1000 for g in gaps(q)], "unit": "ms"},
         "output_sequence_length": {"value": q["out"], "unit": "tokens"},
         "inter_token_latency": {"value": (lat - ttft) / (q["out"] - 1), "unit": "ms"}}
    recs.append({"metadata": meta, "metrics": m, "error": None})
    resp = [{"perf_ns": perf0 + 1_500_000, "packets": [{"name": "data", "value": json.dumps(
        {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})}]}]
    for k, t in zip(q["sizes"], q["times"]):
        resp.append({"perf_ns": perf0 + int(round(t * 1e9)), "packets": [{"name": "data", "value": json.dumps(
            {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "ab" * k}}]})}]})
    resp.append({"perf_ns": perf0 + int(round(q["times"][-1] * 1e9)) + 200_000, "packets": [{"name": "data", "value": json.dumps(
        {"id": "c", "object": "chat.completion.chunk", "choices": [],
         "usage": {"prompt_tokens": q["prompt"], "completion_tokens": q["out"], "total_tokens": q["prompt"] + q["out"]}})}]})
    resp.append({"perf_ns": perf0 + int(round(q["times"][-1] * 1e9)) + 300_000, "packets": [{"name": "data", "value": "[DONE]"}]})
    raws.append({"metadata": meta, "start_perf_ns": perf0, "payload": {"messages": [{"role": "user", "content": "hi"}],
                 "max_tokens": q["out"], "stream": True}, "request_headers": None, "status": 200, "response_headers": None,
                 "responses": resp, "error": None})
write("aiperf/profile_export.jsonl", recs, lines=True)
write("aiperf/profile_export_raw.jsonl", raws, lines=True)


def nv_metric(xs, unit, header):
    return {"unit": unit, "avg": mean(xs), "p1": pct(xs, 1), "p5": pct(xs, 5), "p10": pct(xs, 10), "p25": pct(xs, 25),
            "p50": pct(xs, 50), "p75": pct(xs, 75), "p90": pct(xs, 90), "p95": pct(xs, 95), "p99": pct(xs, 99),
            "min": min(xs), "max": max(xs), "std": std(xs)}


good = [r["metrics"] for r in recs if r["error"] is None]
agg = {"schema_version": "1.0", "aiperf_version": "0.3.0", "benchmark_id": "b1",
       "time_to_first_token": nv_metric([m["time_to_first_token"]["value"] for m in good], "ms", "TTFT"),
       "inter_token_latency": nv_metric([m["inter_token_latency"]["value"] for m in good], "ms", "ITL"),
       "request_latency": nv_metric([m["request_latency"]["value"] for m in good], "ms", "Latency"),
       "input_sequence_length": nv_metric([m["input_sequence_length"]["value"] for m in good], "tokens", "ISL"),
       "output_sequence_length": nv_metric([m["output_sequence_length"]["value"] for m in good], "tokens", "OSL"),
       "request_throughput": {"unit": "requests/sec", "avg": len(good) / ((max(r["metadata"]["request_end_ns"] for r in recs) - min(r["metadata"]["request_start_ns"] for r in recs)) / 1e9)},
       "benchmark_duration": {"unit": "sec", "avg": (max(r["metadata"]["request_end_ns"] for r in recs) - min(r["metadata"]["request_start_ns"] for r in recs)) / 1e9},
       "input_config": {"endpoint": {"model_names": ["m"], "type": "chat", "streaming": True},
                        "loadgen": {"concurrency": 8, "request_rate": None}}}
write("aiperf/profile_export_aiperf.json", agg)

# GenAI-Perf profile_export.json: one token a content response, a role-only
# first response and an empty-delta and [DONE] last, as perf_analyzer records
# an OpenAI chat stream; timestamps in ns.
run = make_run(14, 5.0, False, 8, out_max=24)
reqs = []
ttfts, itls, lats, osls = [], [], [], []
for q in run:
    ts = int(q["start"] * 1e9)
    if q["error"]:
        reqs.append({"timestamp": ts, "request_inputs": {"payload": json.dumps({"messages": [{"role": "user", "content": "x"}], "stream": True})},
                     "response_timestamps": [], "response_outputs": []})
        continue
    outs = [{"response": 'data: {"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}\n\n'}]
    times = [ts + 900_000]
    for t in q["times"]:
        outs.append({"response": 'data: {"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":null}]}\n\n'})
        times.append(ts + int(round(t * 1e9)))
    outs.append({"response": 'data: {"id":"a","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n'})
    times.append(times[-1] + 100_000)
    outs.append({"response": "data: [DONE]\n\n"})
    times.append(times[-1] + 50_000)
    reqs.append({"timestamp": ts, "request_inputs": {"payload": json.dumps({"messages": [{"role": "user", "content": "x"}], "model": "m", "stream": True, "max_tokens": q["out"]})},
                 "response_timestamps": times, "response_outputs": outs})
    # genai_perf's LLMProfileDataParser: content responses only; ns.
    content = times[1:-2]
    ttft = content[0] - ts
    lat = content[-1] - ts
    ttfts.append(ttft)
    lats.append(lat)
    osls.append(len(content))
    itls.append((lat - ttft) / (len(content) - 1))
write("genai-perf/profile_export.json", {"experiments": [{"experiment": {"mode": "concurrency", "value": 4}, "requests": reqs,
                                                          "window_boundaries": [reqs[0]["timestamp"], reqs[-1]["timestamp"]]}],
                                         "version": "2.40", "service_kind": "openai", "endpoint": "v1/chat/completions"})
write("genai-perf/profile_export_genai_perf.json", {
    "time_to_first_token": nv_metric([x / 1e6 for x in ttfts], "ms", ""),
    "inter_token_latency": nv_metric([x / 1e6 for x in itls], "ms", ""),
    "request_latency": nv_metric([x / 1e6 for x in lats], "ms", ""),
    "output_sequence_length": nv_metric(osls, "tokens", ""),
    "input_config": {"model": ["m"], "concurrency": 4, "request_rate": None, "streaming": True}})

# llmperf: *_individual_responses.json and *_summary.json (flattened).
run = make_run(25, 4.0, True, 9)
rows = []
for q in run:
    if q["error"]:
        rows.append({"error_code": 503, "error_msg": q["error"], "inter_token_latency_s": 0, "ttft_s": 0,
                     "end_to_end_latency_s": 0, "request_output_throughput_token_per_s": 0,
                     "number_total_tokens": q["prompt"], "number_output_tokens": 0, "number_input_tokens": q["prompt"]})
        continue
    e2e = q["times"][-1]
    # llmperf: sum(time_to_next_token), the TTFT included, over the output tokens.
    rows.append({"error_code": None, "error_msg": "", "inter_token_latency_s": e2e / q["out"], "ttft_s": q["times"][0],
                 "end_to_end_latency_s": e2e, "request_output_throughput_token_per_s": q["out"] / e2e,
                 "number_total_tokens": q["prompt"] + q["out"], "number_output_tokens": q["out"],
                 "number_input_tokens": q["prompt"]})
good = [r for r in rows if r["error_code"] is None]
summ = {"version": "2023-08-31", "name": "m_550_150_summary", "model": "m", "mean_input_tokens": 550,
        "stddev_input_tokens": 150, "mean_output_tokens": 150, "stddev_output_tokens": 10,
        "num_concurrent_requests": 4, "additional_sampling_params": "{}"}
for key in ("inter_token_latency_s", "ttft_s", "end_to_end_latency_s", "request_output_throughput_token_per_s",
            "number_input_tokens", "number_output_tokens"):
    xs = [r[key] for r in good]
    for p in (25, 50, 75, 90, 95, 99):
        summ[f"results_{key}_quantiles_p{p}"] = pct(xs, p)
    summ[f"results_{key}_mean"] = mean(xs)
    summ[f"results_{key}_min"] = min(xs)
    summ[f"results_{key}_max"] = max(xs)
    summ[f"results_{key}_stddev"] = std(xs) * math.sqrt(len(xs) / (len(xs) - 1))
summ.update({"results_num_requests_started": len(rows), "results_error_rate": 1 / len(rows), "results_number_errors": 1,
             "results_error_code_frequency": "{503: 1}", "results_mean_output_throughput_token_per_s": 0,
             "results_num_completed_requests": len(good), "results_num_completed_requests_per_min": len(good) / 7.5 * 60,
             "timestamp": 1764582000})
write("llmperf/m_550_150_individual_responses.json", rows)
write("llmperf/m_550_150_summary.json", summ)
