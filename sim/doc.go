// Package sim is servelab's simulator of an LLM inference server: a
// roofline step model, scheduler policies, a steppable engine with real
// engines' limits, workloads, clusters of prefill and decode instances,
// latency metrics and goodput search.
//
// It is pure and deterministic: no clock, no I/O, no goroutines, no
// globals. The same code runs natively, under wasm in the browser, and
// behind the lab server, which drives the engine in real time.
//
// # Reading guide
//
// Read it in the order a request meets it.
//
// # The engine
//
// An [Engine] (engine.go) holds the requests submitted to it and runs one
// iteration per [Engine.Step]: its policy picks the batch, the step model
// prices it, the clock advances by that many seconds and every sequence in
// the batch moves on (a prompt's chunk prefilled, a token decoded). [Run]
// (run.go) is the whole-run driver: it submits every [Request] up front
// and steps until all are done, returning an [Outcome] of per-request
// [Result] values and, with [Config.Trace], every [Iteration]. The fast
// paths (lazy.go, decoderun.go) settle long stretches of decode-only steps
// at once; they give the same results bit for bit as stepping one by one.
//
// The engine enforces the [Limits] real engines have (limits.go): most
// sequences at once, and a KV cache of paged blocks sized from the GPU's
// memory left after the weights; when it is full a sequence is preempted
// (recomputed later) or requests wait.
//
// # Policies
//
// A [Policy] (policy.go) chooses each iteration's work: [PrefillFirst] runs
// waiting prompts before any decode, [Chunked] fills a per-step token
// budget with the running decodes plus chunks of waiting prompts, and
// [PrefillOnlyPolicy] and [DecodeOnlyPolicy] are the single-phase
// instances of a disaggregated cluster. [NewPolicy] builds one by name.
//
// # The step model
//
// A [StepModel] (step.go) prices one iteration on a roofline: the FLOPs of
// the tokens processed and the bytes of weights and KV cache read, each
// over the GPU's peak times an efficiency, the larger of the two, plus a
// fixed overhead. [StepModel.Decode], [StepModel.Prefill] and
// [StepModel.Mixed] price the three kinds of batch; the [Bound] says which
// side of the roofline the step fell on. A [Profile] (profile.go and
// profiles/) sets the model's constants per GPU: "lecture" is the
// lecture's model, "vllm" one fitted to published vLLM measurements.
//
// # Clusters
//
// A [Cluster] (cluster.go) is x prefill instances and y decode instances
// behind a router: a request's prompt is prefilled on one, its KV cache
// moved over the GPUs' link, and its tokens decoded on another.
// [RunDisaggregated] runs one.
//
// # Prefix caching, replicas and speculation
//
// With [Limits.PrefixCaching] the engine keeps KV blocks by content
// (prefix.go): a request names its prompt's full blocks by chain hashes
// ([Request.Blocks], [ChainHashes], [HashIDs]) and reuses the longest
// cached prefix; freed blocks stay cached until evicted, least recently
// used first ([PrefixStats]). [Conversations] builds workloads that share
// prefixes: a system prompt, multi-turn sessions. [RunReplicas]
// (replicas.go) runs N colocated engines behind a router ([Route]:
// round-robin, least-outstanding, prefix-aware) whose load figures may be
// stale. [Speculation] (spec.go) drafts K tokens per step and verifies
// them in one pass of K+1 ([SpecStats]).
//
// # Workloads, metrics and goodput
//
// Workloads (workload.go) are open-loop Poisson arrivals with fixed lengths
// or distributions ([Poisson], [PoissonLengths]), the lab's closed loop
// with a long prompt injected ([LabWorkload], [RunLab], lab.go), and
// requests held in memory (a replayed trace). Metrics (metrics.go,
// gaps.go) are TTFT, TPOT, every inter-token gap (counted by value for
// long runs, [GapCount]) and E2E, with the nearest-rank [Percentile] the
// lab's script uses, and [Attainment] of an [SLO]. Goodput (goodput.go) is
// the highest arrival rate whose attainment reaches a target, found by
// bisection: [InstanceGoodput] for one engine, [ClusterGoodput] for a
// cluster.
//
// # Around the simulator
//
// Packages beside it build its inputs or read and write what it is
// compared with; sim imports none of them:
//
//   - servelab/sim/scenario: the experiment as a value (Experiment, the
//     knob table of every setting, presets) that every front end builds
//     through: the CLI's flags and the page's URL and controls alike;
//   - servelab/sim/results: other benchmark tools' result files, behind one
//     format table, and request traces (a replayed trace is a []Request);
//   - servelab/sim/lab: the lab script's (run.py) measured JSON, its summary
//     and windows, its prompts and the token-stream reader;
//   - servelab/sim/calibrate: fitting a profile's constants to measured runs;
//   - servelab/sim/lecture: the interference lecture's four demos;
//   - servelab/sim/course: the live tables of the chapters after it
//     (prefix caching, routing, speculative decoding).
//
// A benchmark run at a fixed concurrency replays as a closed loop:
// [RunClosed].
//
// sim imports the standard library and the catalogues (servelab/hwspecs,
// servelab/modelspecs) only. Every front end (cmd/servelab, the lab
// server, the page under wasm) may import it.
package sim
