package sim

import (
	"fmt"
	"strings"
)

// Policy decides what goes into the next iteration, given the waiting queue
// and the running set. The engine enforces memory; a policy only chooses.
type Policy interface {
	// Name is the policy's CLI name, e.g. "chunked".
	Name() string
	// Plan fills p (already empty) from q.
	Plan(q *Queue, p *Plan)
}

// Role says which phases an instance runs; policies that serve only one
// phase implement Roled.
type Role int

// The roles an instance can have.
const (
	Colocated   Role = iota // prefill and decode on the same GPU(s)
	PrefillOnly             // a request leaves after its first token (disaggregated prefill instance)
	DecodeOnly              // a request arrives with its KV cache already built
)

// Roled is implemented by policies for single-phase instances.
type Roled interface{ Role() Role }

// Queue is the scheduler's view of the engine: FCFS waiting sequences and
// running (decoding) sequences. Admit asks the engine for KV room.
type Queue struct {
	Waiting []*Seq
	Running []*Seq
	admit   func(s *Seq, tokens int) bool
	reuse   func(s *Seq) int // with prefix caching
}

// Reuse returns the prefill tokens s still needs before its next token.
// With prefix caching, a sequence starting its prefill first takes the
// longest cached prefix of its prompt (so it needs fewer): policies call
// it, not Seq.Remaining, to size a waiting sequence's chunk.
func (q *Queue) Reuse(s *Seq) int {
	if q.reuse == nil {
		return s.Remaining()
	}
	return q.reuse(s)
}

// Admit reports whether s may process tokens more prefill tokens this step,
// reserving the KV-cache room when it may. Policies call it for every chunk.
func (q *Queue) Admit(s *Seq, tokens int) bool { return q.admit(s, tokens) }

// Plan is one iteration's content.
type Plan struct {
	Decodes int     // the first Decodes running sequences each decode one token
	Chunks  []Chunk // prefill chunks, at most one per sequence
}

// Chunk is Tokens prefill tokens of Seq.
type Chunk struct {
	Seq    *Seq
	Tokens int
}

// PrefillFirst is the lecture's colocated baseline (vLLM's old default): if
// prompts wait, the step prefills whole waiting prompts (FCFS, up to
// MaxTokens, always at least one); otherwise every running sequence decodes.
type PrefillFirst struct{ MaxTokens int }

// Name implements Policy.
func (PrefillFirst) Name() string { return "prefill-first" }

// Plan implements Policy.
func (p PrefillFirst) Plan(q *Queue, out *Plan) {
	wholePrompts(q, out, p.MaxTokens)
	if len(out.Chunks) == 0 {
		out.Decodes = len(q.Running)
	}
}

// wholePrompts adds whole remaining prompts from the queue head while they fit in max tokens.
func wholePrompts(q *Queue, out *Plan, max int) {
	used := 0
	for _, s := range q.Waiting {
		n := q.Reuse(s)
		if len(out.Chunks) > 0 && used+n > max {
			break
		}
		if !q.Admit(s, n) {
			break // FCFS: nothing may overtake a blocked head
		}
		out.Chunks = append(out.Chunks, Chunk{s, n})
		used += n
	}
}

// Chunked is Sarathi-Serve's stall-free batching (vLLM's current default):
// every step carries the running decodes, then prefill chunks from the FCFS
// queue until the token budget is full. As in vLLM the budget counts the
// decode tokens; with ExcludeDecodes it limits only the prefill tokens, which
// is how the lecture's simulator reads "budget" (its demo 4 numbers need it).
type Chunked struct {
	Budget         int
	ExcludeDecodes bool
}

// Name implements Policy.
func (Chunked) Name() string { return "chunked" }

// Plan implements Policy.
func (p Chunked) Plan(q *Queue, out *Plan) {
	left := p.Budget
	out.Decodes = len(q.Running)
	if !p.ExcludeDecodes {
		out.Decodes = min(out.Decodes, left)
		left -= out.Decodes
	}
	for _, s := range q.Waiting {
		if left == 0 {
			break
		}
		n := min(left, q.Reuse(s))
		if !q.Admit(s, n) {
			break
		}
		out.Chunks = append(out.Chunks, Chunk{s, n})
		left -= n
	}
}

// PrefillOnlyPolicy runs a prefill instance: whole prompts, FCFS, and each
// request leaves after its first token.
type PrefillOnlyPolicy struct{ MaxTokens int }

// Name implements Policy.
func (PrefillOnlyPolicy) Name() string { return "prefill-only" }

// Role implements Roled.
func (PrefillOnlyPolicy) Role() Role { return PrefillOnly }

// Plan implements Policy.
func (p PrefillOnlyPolicy) Plan(q *Queue, out *Plan) { wholePrompts(q, out, p.MaxTokens) }

// DecodeOnlyPolicy runs a decode instance: requests arrive with their KV
// cache built elsewhere and every running sequence decodes each step.
type DecodeOnlyPolicy struct{}

// Name implements Policy.
func (DecodeOnlyPolicy) Name() string { return "decode-only" }

// Role implements Roled.
func (DecodeOnlyPolicy) Role() Role { return DecodeOnly }

// Plan implements Policy.
func (DecodeOnlyPolicy) Plan(q *Queue, out *Plan) { out.Decodes = len(q.Running) }

// Compile-time checks that each policy is a Policy.
var (
	_ Policy = PrefillFirst{}
	_ Policy = Chunked{}
	_ Policy = PrefillOnlyPolicy{}
	_ Policy = DecodeOnlyPolicy{}
)

// DefaultBudget is the chunked policy's token budget (vLLM's max_num_batched_tokens default).
const DefaultBudget = 2048

// DefaultMaxPrefillTokens bounds one prefill-first step (max-num-batched-tokens with chunking off).
const DefaultMaxPrefillTokens = 32768

// PolicyNames lists the names NewPolicy accepts.
func PolicyNames() []string {
	return []string{"prefill-first", "chunked", "prefill-only", "decode-only"}
}

// NewPolicy builds a policy by name; budget is the chunked token budget or the
// prefill step's token cap (0 means the default).
func NewPolicy(name string, budget int) (Policy, error) {
	if budget < 0 || budget > MaxTokens {
		return nil, fmt.Errorf("budget must be in 1..%d tokens, got %d", MaxTokens, budget)
	}
	orDefault := func(d int) int {
		if budget == 0 {
			return d
		}
		return budget
	}
	switch strings.ToLower(name) {
	case "prefill-first", "colocated", "":
		return PrefillFirst{MaxTokens: orDefault(DefaultMaxPrefillTokens)}, nil
	case "chunked":
		return Chunked{Budget: orDefault(DefaultBudget)}, nil
	case "prefill-only":
		return PrefillOnlyPolicy{MaxTokens: orDefault(DefaultMaxPrefillTokens)}, nil
	case "decode-only":
		return DecodeOnlyPolicy{}, nil
	}
	return nil, fmt.Errorf("unknown policy %q; valid: %s", name, strings.Join(PolicyNames(), ", "))
}
