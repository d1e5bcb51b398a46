package results

// SGLang's `python -m sglang.bench_serving --output-file F --output-details`:
// one JSON line appended per run, summary keys
// {mean,median,std,p99}_{ttft,tpot,itl,e2e_latency}_ms beside vLLM's
// per-request arrays (no start times in the versions read). Python writes
// an unlimited --request-rate as the bare literal Infinity.

import (
	"encoding/json"

	"servelab/sim"
)

var _ objectLiner = (*sglangLines)(nil) // its long lines are read in slices

// sglangLines reads SGLang's file a line (a run) at a time.
type sglangLines struct{ runs []*Run }

func newSGLangLines() lineReader { return &sglangLines{} }

func (l *sglangLines) line(raw []byte) error {
	b, err := sglangLine(raw)
	l.runs = append(l.runs, b)
	return err
}

// object takes a line read in slices.
func (l *sglangLines) object(keys map[string]json.RawMessage, pre *preRead) error {
	b, err := sglangRun(keys, pre)
	l.runs = append(l.runs, b)
	return err
}

func (l *sglangLines) finish() ([]*Run, error) {
	if len(l.runs) == 0 {
		return nil, sim.Refuse("bench.err.noruns", "no runs in the file")
	}
	return l.runs, nil
}

// sglangLine reads one line of SGLang's file: one run.
func sglangLine(raw []byte) (*Run, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errNotObject
	}
	liftDetails(obj)
	return sglangRun(obj, nil)
}

var errNotObject = sim.Refuse("value.notobject", "not a JSON object")

// sglangRun is the run of one line's object, details lifted (pre: the arrays read already).
func sglangRun(obj map[string]json.RawMessage, pre *preRead) (*Run, error) {
	b := &Run{Tool: "sglang", Format: "sglang.bench_serving --output-details", Method: "linear", Summary: map[string]float64{}}
	if err := perRequestArrays(obj, pre, b); err != nil {
		return nil, err
	}
	for theirs, ours := range map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2e"} {
		msKeys(obj, theirs, ours, b.Summary)
	}
	b.note("bench.sglang.itl", "SGLang's native backend spreads a chunk's gap over its tokens (itl already per token); its OpenAI backends keep one gap per chunk")
	return b, nil
}
