// Package results reads what other tools measured, for the simulator to be
// compared with: benchmark tools' result files and request traces.
//
// # Benchmark files
//
// [Read] reads a file of vLLM's `vllm bench serve --save-detailed`,
// GuideLLM, AIPerf, GenAI-Perf, SGLang's bench_serving, llmperf or NVIDIA's
// summaries into [Run] values: the requests as the tool recorded them, the
// load it offered and the figures the file states. [Run.Figures] computes
// the figures (TTFT, TPOT, ITL per chunk and per token, E2E) as the tool
// takes percentiles, [Run.Timeline] puts the chunk gaps on the run's clock,
// and [Run.Workload] with [Simulate] repeats the run in the simulator.
// [ReadSliced] is Read for a large file, read value by value with a [Tick]
// between slices (the page has one thread); its runs and errors are Read's.
//
// The format is told from the content (the name only breaks a tie and
// labels the runs) by one table, [Formats]: each row names a format and
// its tool, detects it from the top-level keys (of the object, of the
// first line of JSON Lines, or of a list's first entry) and reads it,
// whole or a line or an entry at a time.
// A new format is one file with its reader and one row (plus its notes'
// catalogue keys). The lab's own files (run.py's, servelab measure's) are a
// row too, which [Detect] names and sim/lab reads. A file no row detects
// is refused with what was seen: its keys, or its first bytes.
//
// # Request traces
//
// [ReadTrace] reads a trace (CSV with a header, or JSON Lines) of arrival
// times and lengths into the simulator's requests, matching the usual
// column names of published traces; [WriteTrace] writes one it reads back.
//
// # Imports
//
// results imports sim for its types (Request, Config, Outcome, Gap, Note)
// and the closed loop a benchmark's concurrency asks for, and
// sim/internal/jsonread for the refusals it shares with sim/lab. sim does
// not import it; sim/calibrate, sim/lecture, the front ends (cmd/servelab,
// the page under wasm) may.
package results
