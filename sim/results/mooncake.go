package results

// Mooncake's request traces (kvcache-ai/Mooncake, FAST25-release/traces;
// the replay format AIPerf, GuideLLM, SGLang and Dynamo take): JSON Lines,
// per request {timestamp (ms after the trace's start), input_length,
// output_length, hash_ids}. A trace records what was asked, not what was
// measured: its run has arrivals and lengths, and no latencies.

import (
	"encoding/json"
	"math"
)

// BlockHashes are one request's prompt as a trace's prefix-cache blocks,
// in prompt order: each id names one block of the trace's block size in
// tokens, and equal ids in two requests are the same tokens (a shared
// prefix). Mooncake's hash_ids are such ids, 512 tokens a block.
type BlockHashes []int64

// Names are the hashes as the engine's block names (sim.Request.Blocks).
func (h BlockHashes) Names() []uint64 {
	out := make([]uint64, len(h))
	for i, id := range h {
		out[i] = uint64(id)
	}
	return out
}

// MooncakeBlockTokens is the tokens of one block of Mooncake's hash_ids:
// a request of input_length tokens has ceil(input_length / 512) ids.
const MooncakeBlockTokens = 512

// isMooncake reports whether a trace record is Mooncake's, whose
// timestamp counts milliseconds: it has hash_ids, or Mooncake's three
// names (timestamp, input_length, output_length) exactly.
func isMooncake(m map[string]json.RawMessage) bool {
	_, blocks := m["hash_ids"]
	return blocks || hasAll(m, "timestamp", "input_length", "output_length")
}

// mooncakeDetect: JSON Lines (or a one-line object) with a timestamp and
// both lengths, as Mooncake names them.
func mooncakeDetect(s Shape, m map[string]json.RawMessage) bool {
	return s != List && hasAll(m, "timestamp", "input_length", "output_length")
}

// mooncakeLines reads a Mooncake trace a line at a time with the trace
// reader ReadTrace uses (which reads its timestamps as milliseconds).
type mooncakeLines struct {
	tr *traceReader
	n  int // lines read so far
}

func newMooncakeLines() lineReader {
	return &mooncakeLines{tr: &traceReader{name: "mooncake trace"}}
}

func (l *mooncakeLines) line(raw []byte) error {
	l.n++
	return l.tr.jsonLine(l.n, raw)
}

func (l *mooncakeLines) finish() ([]*Run, error) {
	reqs, err := l.tr.finish()
	if err != nil {
		return nil, err
	}
	b := &Run{Tool: "mooncake", Format: "Mooncake trace (JSON Lines)", Method: "linear", Summary: map[string]float64{},
		Trace: true, Requests: make([]Request, len(reqs))}
	if l.tr.blocks != nil {
		b.BlockTokens = MooncakeBlockTokens
	}
	for i, q := range reqs {
		r := Request{Start: q.Arrival, Prompt: q.Prompt, Output: q.Output}
		if l.tr.blocks != nil {
			r.Blocks = l.tr.blocks[i]
		}
		b.Requests[i] = r
		b.Duration = math.Max(b.Duration, q.Arrival)
	}
	b.cannot("bench.trace.times", "latencies: a request trace records arrivals and lengths, not what a server measured")
	if l.tr.blocks != nil {
		b.note("bench.trace.blocks", "hash_ids kept as each request's prefix blocks (%d tokens a block)", MooncakeBlockTokens)
	}
	return []*Run{b}, nil
}

// BlockShare is the share of the trace's prompt blocks that an earlier
// request had already sent (what a prefix cache as large as the trace
// could hit), over the requests in arrival order; 0 when no request
// carries blocks.
func (b *Run) BlockShare() float64 {
	seen := map[int64]bool{}
	total, hit := 0, 0
	for _, r := range b.Requests {
		for _, id := range r.Blocks {
			total++
			if seen[id] {
				hit++
			}
			seen[id] = true
		}
	}
	if total == 0 {
		return 0
	}
	return float64(hit) / float64(total)
}

var _ lineReader = (*mooncakeLines)(nil)
