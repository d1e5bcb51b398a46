//go:build js && wasm

package play

// The English of the texts the simulator writes (sim.Note keys, as
// "sim."+key: the benchmark readers' notes and "cannot give" lines,
// calibration's figure names and reasons) and of the built-in profiles'
// texts ("ptext.*" word for word, "ptpl.*" templates, "pconst.*" the
// constants' meanings); merged into catalogueEN. Each is sim's English
// exactly: TestSimTextsAreInTheCatalogues checks it.
var simEN = map[string]string{
	"sim.bench.chunks":             "chunks carried %.2f tokens on average, so a chunk gap is not one inter-token gap: itl is per chunk (%s); itl_token spreads each gap over the tokens after the first, shared evenly among the request's chunks (the file keeps each request's total, not each chunk's count)",
	"sim.bench.merged":             "figures stated by %s",
	"sim.bench.aiperf.load":        "the load asked for (rate or concurrency) and the tool's own percentiles: they are in profile_export_aiperf.json beside this file",
	"sim.bench.aiperf.itl":         "AIPerf's inter_token_latency is (e2e − TTFT)/(output − 1): servelab's tpot",
	"sim.bench.aiperf.chunks":      "AIPerf's inter_chunk_latency",
	"sim.bench.aiperf.counted":     "where the server sent no usage, output tokens are counted as content chunks (AIPerf counts them with its tokenizer)",
	"sim.bench.aiperf.starts":      "start times: metadata.request_start_ns is missing",
	"sim.bench.genaiperf.counted":  "output tokens counted as content responses (GenAI-Perf counts them with its tokenizer): with several tokens a response, tpot and itl_token read high by that factor",
	"sim.bench.genaiperf.prompt":   "prompt tokens: GenAI-Perf tokenizes the prompts and does not write the counts here (profile_export_genai_perf.json beside has their mean)",
	"sim.bench.genaiperf.itl":      "GenAI-Perf's inter_token_latency is (e2e − TTFT)/(output − 1): servelab's tpot",
	"sim.bench.genaiperf.chunks":   "gaps between content responses",
	"sim.bench.guidellm.sample":    "the file keeps a sample of %d of %d successful requests; figures from the sample can differ from the file's own",
	"sim.bench.guidellm.itl":       "itl_token is GuideLLM's per-request mean gap counted once per token after the first, as its own inter_token_latency_ms distribution counts it",
	"sim.bench.guidellm.times":     "itl (per chunk) and per-token times: GuideLLM keeps only each request's first and last token times, so nothing goes on the timeline",
	"sim.bench.llmperf.times":      "itl (per chunk), per-token times and start times: llmperf keeps none, so nothing goes on the timeline",
	"sim.bench.llmperf.itl":        "llmperf's inter_token_latency_s: it is (TTFT + every gap) / output tokens, the TTFT included, so it is not compared; tpot and itl_token come from e2e − TTFT",
	"sim.bench.llmperf.load":       "the load asked for and the tool's own percentiles: they are in *_summary.json beside this file",
	"sim.bench.llmperf.tokens":     "output tokens are llmperf's re-tokenized count of the text (a Llama tokenizer), not the server's",
	"sim.bench.llmperf.aggregate":  "per-request data: this is the aggregate; the requests are in *_individual_responses.json beside it",
	"sim.bench.llmperf.itlsummary": "llmperf's inter_token_latency_s includes the TTFT and is not compared",
	"sim.bench.nv.aggregate":       "per-request data: this is the aggregate; the requests are in profile_export.json(l) beside it",
	"sim.bench.sglang.itl":         "SGLang's native backend spreads a chunk's gap over its tokens (itl already per token); its OpenAI backends keep one gap per chunk",
	"sim.bench.vllm.errors":        "errors lists %d failures apart from the %d requests kept",
	"sim.bench.vllm.e2e":           "e2e latency taken as TTFT plus the chunk gaps (the file keeps no latencies)",
	"sim.bench.vllm.starts":        "start times: this version writes none, so chunk gaps cannot go on the timeline",
	"sim.bench.vllm.chunks":        "the tool's itls",

	"sim.cal.fig.quiet":      "quiet ITL p50",
	"sim.cal.fig.ttft":       "long TTFT",
	"sim.cal.fig.worst":      "worst gap",
	"sim.cal.fig.longdecode": "ITL p50 while the long request decodes",
	"sim.cal.fig.prefill":    "ITL p50 during the long prefill",
	"sim.cal.fig.decode":     "ITL p50 (decode of %d at context %d)",
	"sim.cal.fig.prompt":     "TTFT p50 (prefill of %d tokens)",
	"sim.cal.why.nofigure":   "no figure in these files depends on it",
	"sim.cal.why.nopin":      "these files do not pin it",
	"sim.cal.why.pin":        "these files pin it only to ±%.0f%%",
	"sim.cal.why.partner":    "%s; it trades off against %s (measure another batch size, context or prompt length to separate them)",
	"sim.cal.kept":           "kept at the base value: %s",
	"sim.cal.source":         "servelab calibrate on %s (±%.1f%%)",
	"sim.cal.gpunote":        "calibrated on %s: fitted %s; the rest from profile %s",
	"cal.notid.item":         "%s: %s",

	"ptpl.fitted": "fitted by `%s` to the %s published points on %s (cmd/servelab/testdata/fidelity) (±%s)",
	"ptpl.gpufit": "fitted to %s published points on %s",
	"ptpl.mean":   "no published points for this GPU: the mean of the values fitted on %s (%s) and %s (%s)",
	"ptpl.nofit":  "%s has no constants of its own in profile %s: the profile-wide values apply",

	"ptext.lecture.effc":      "lecture: reproduces its 14.07 ms prefill of 512 tokens and the 7.23x slowdown (Llama-3.1-8B, H100 SXM)",
	"ptext.lecture.effm":      "lecture: reproduces its ~7.7 ms decode step of 32 sequences at context 700 (Llama-3.1-8B, H100 SXM)",
	"ptext.lecture.ovh":       "lecture: 1 ms per iteration, the course's assumption",
	"ptext.lecture.allreduce": "servelab's assumption: a ring all-reduce reaches about 70% of the NVLink bandwidth",
	"ptext.lecture.unfitted":  "The lecture's constants are the same on every GPU; they were chosen to reproduce the lecture, not fitted to a GPU.",
	"ptext.vllm.effkv":        "fitted to the long-context decode points (Sarathi-Serve Mistral-7B batch 32 x 4096, TensorRT-LLM 7B throughput): a free fit on A100-80GB runs into 1.0, held at 0.9 as no kernel streams HBM faster; FlashDecoding-style kernels read long KV nearly at peak",
	"ptext.vllm.ovh":          "assumption: vLLM with CUDA graphs spends 1-2 ms of CPU per iteration (scheduling, input preparation, output processing); the published points pin it only to ±36% (fidelity --fit)",
	"ptext.vllm.seqcost":      "assumption: about 5 µs of CPU per sequence per iteration (sampling bookkeeping, detokenising); the published points do not pin it (`fidelity --fit` gives ±212%; taking it out moves the vLLM CI throughput points by about 1%)",
	"ptext.vllm.reqcost":      "assumption: about 0.3 ms of engine CPU per prompt admitted (tokens to blocks, scheduling, input preparation); the published points do not pin it (±116%); the front-end's HTTP and tokenising are req_latency",
	"ptext.vllm.allreduce":    "servelab's assumption (as in the lecture profile): a ring all-reduce reaches about 70% of the link bandwidth; consistent with the TP4/TP8 2048-token TensorRT-LLM TTFTs (within 5%)",
	"ptext.vllm.collective":   "25 µs per all-reduce, two per layer (NCCL/custom all-reduce launch and synchronisation): chosen by hand on the vLLM CI TP4 70B and TP2 Mixtral latencies (without it TP4 ITL is 15-30% low); `servelab fidelity --fit --free collective_latency` pins it only to ±40% on H100-SXM and ±24% on H200 around this value",
	"ptext.vllm.reqlat":       "from issue 12's fit to published serving benchmarks (kept apart from these points): light-load TTFT comes out 25-40 ms low without a per-request cost; 20 ms (the low end, less the few ms this profile's prefill already adds) of HTTP, tokenising, detokenising and process hops, outside the engine's iterations. The shared points (offline engines) cannot pin it",
	"ptext.vllm.h200":         "eff_mem fitted to 4 published points on H200; compute from H100-SXM (the same GH100 chip)",
	"ptext.vllm.h200effc":     "H100-SXM's fitted value: the H200 is the same GH100 chip with more and faster HBM, and its published points are all decode-bound",
	"ptext.vllm.h200p":        "H100-SXM's fitted value (the same GH100 chip)",
	"ptext.vllm.unfitted":     "no published points for this GPU in cmd/servelab/testdata/fidelity: the profile-wide values (the means of the A100-80GB and H100-SXM fits, and assumptions) apply",

	"pconst.eff_compute":        "fraction of peak FLOP/s the GEMMs reach",
	"pconst.eff_mem":            "fraction of peak bandwidth reading the weights",
	"pconst.eff_kv":             "fraction of peak bandwidth attention's KV-cache reads reach",
	"pconst.roofline_p":         "p of the smooth roofline (c^p + m^p)^(1/p); 0 is the hard max",
	"pconst.overhead":           "fixed time per iteration (scheduling, launches)",
	"pconst.seq_cost":           "CPU time per sequence in an iteration (sampling, detokenising, bookkeeping)",
	"pconst.req_cost":           "CPU time per prompt starting its prefill (tokenising, admission)",
	"pconst.req_latency":        "time a request spends outside the engine (HTTP, tokenising, detokenising): adds to TTFT and E2E, occupies no iteration",
	"pconst.allreduce_eff":      "fraction of the link bandwidth an all-reduce reaches (TP > 1)",
	"pconst.collective_latency": "fixed time per all-reduce, two per layer (TP > 1)",
}

func init() {
	for k, v := range simEN {
		catalogueEN[k] = v
	}
}
