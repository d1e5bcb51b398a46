//go:build js && wasm

package play

// The English texts of compare mode, the KV cache, disaggregation drawn,
// touch and uploads (issue 11); merged into catalogueEN.
var runsEN = map[string]string{
	"cmp.title":      "Compare two runs",
	"cmp.on":         "Compare with run B (same workload, one clock)",
	"cmp.edit":       "The settings on the left change:",
	"cmp.edita":      "run A",
	"cmp.editb":      "run B",
	"cmp.reset":      "B = A",
	"cmp.off":        "Off. Turn it on to run the same requests a second time with other settings (policy, budget, model, GPU, limits) on the same time axis.",
	"cmp.same":       "nothing yet — pick run B above and change a setting",
	"cmp.diff":       "B differs from A in: %s.",
	"cmp.errb":       "Run B cannot be simulated: %s",
	"cmp.caption":    "Run A and run B, B/A",
	"cmp.attain":     "SLO attainment",
	"cmp.throughput": "Throughput (tok/s)",
	"cmp.preempt":    "Preemptions",
	"cmp.budget":     "budget %d",
	"cmp.gpus":       "GPUs",
	"cmp.editing":    "Editing run B: the workload stays shared with A",

	"leg.limits":     "Engine limits (KV cache)",
	"ctl.ideal":      "Ideal engine: no memory or sequence limits (the lecture's)",
	"ctl.maxseqs":    "Max sequences (--max-seqs)",
	"ctl.gpumem":     "GPU memory utilization",
	"ctl.block":      "KV block size (tokens)",
	"ctl.onfull":     "When the KV cache is full",
	"onfull.preempt": "preempt the newest and recompute it later",
	"onfull.wait":    "wait: reserve whole requests up front",
	"leg.kv":         "memory lane: KV blocks in use (green) under the capacity (yellow line); preemption (vermillion), rejection (white)",
	"leg.xfer":       "KV transfer: a line from the prefill GPU to the decode GPU, a bar as long as the transfer",

	"nav.cmpc": "compare chunking",
	"nav.cmpd": "compare disaggregation",
	"nav.mem":  "memory pressure",

	"preset.compare-chunking.title": "Compare: prefill-first vs chunked 512",
	"preset.compare-chunking.about": "The same 1500 requests at 30 req/s twice on one clock: A prefills whole prompts and stalls the decodes, B cuts prefills into a 512-token budget per step. Watch the gap lanes and the P99 ITL.",
	"preset.compare-disagg.title":   "Compare: one colocated GPU vs 2P+1D",
	"preset.compare-disagg.about":   "The same load per GPU: A is one colocated GPU at 10 req/s, B is two prefill and one decode GPU at 30 req/s (three GPUs' worth), KV moved over the link.",
	"preset.memory-pressure.title":  "The KV cache fills up",
	"preset.memory-pressure.about":  "2048-token prompts with 512-token outputs, only 30% of the GPU's memory for the engine: the cache fills, the newest sequences are preempted and recomputed, and requests wait for memory, not compute.",

	"canvas.routed": "→ %d req",
	"canvas.kv":     "KV cache",
	"canvas.kvcap":  "%d blocks · %d preempted",

	"step.same":         "Run %s at the same moment (%s)",
	"step.kv":           "KV cache: %d of %d blocks in use (%.0f%%), %d tokens a block.",
	"step.kv.share":     "#%d %d tokens (%.1f%%)",
	"step.kv.holders":   "%d requests hold KV here; the largest: %s.",
	"step.held.kv":      "Memory, not compute, held a request back: the next one in the queue found no room in the KV cache, so this step carried fewer prefill tokens than the policy allows.",
	"step.held.seqs":    "The sequence limit, not compute, held a request back: %d sequences already hold a slot.",
	"step.preempted":    "Preempted to make room (their KV cache is freed, they recompute later): %s.",
	"step.rejected":     "Rejected (can never fit): %s.",
	"step.xfer":         "#%d's KV cache → decode %d: %.1f MB in %s ms over the link, there at %s.",
	"step.router":       "The router sends each finished prompt to the decode GPU with the least outstanding work.",
	"workload.trace":    "Trace file (uploaded)",
	"ctl.lendist":       "Lengths",
	"lendist.fixed":     "fixed",
	"lendist.uniform":   "uniform ± spread",
	"lendist.lognormal": "lognormal, sigma = spread",
	"ctl.spread":        "Spread",
	"ctl.upload2":       "Upload a lab JSON or a benchmark tool's result (a second file is run B), a model's config.json, or a trace (CSV/JSONL)",
	"note.trace":        "A trace has its own arrival times: no rate to sweep.",
	"up.badmodel":       "%s is not a model's config.json the page can use: %s",
	"up.model":          "%s: model %s joined the model picker and runs now.",
	"up.badtrace":       "Could not read the trace: %s",
	"up.trace":          "%s: %d requests replayed as the workload (arrival, prompt, output, as servelab sim --trace reads them).",
	"up.third":          "A third file, %s: which run does it replace? A is %s, B is %s.",
	"up.replacea":       "Replace A",
	"up.replaceb":       "Replace B",
	"up.cancel":         "Keep both",
	"up.differs":        "%s says it ran %s, but the page simulates %s.",
	"up.switch":         "Switch to the file's",
	"up.keep":           "Keep the page's",
	"ctl.splitgpus":     "Best prefill:decode split for GPUs",
	"split.go":          "Search",
	"split.running":     "Searching: each phase's goodput on one GPU under its SLO…",
	"split.none":        "No split of %d GPUs meets the SLOs at any rate.",
	"split.best":        "Best for %d GPUs: %dP+%dD, %.2f req/s per GPU (%.1f req/s in all; one prefill GPU %.1f, one decode GPU %.1f req/s).",
	"split.use":         "Use %dP+%dD",
	"split.err":         "The split search failed: %s",
}

func init() {
	for k, v := range runsEN {
		catalogueEN[k] = v
	}
}
