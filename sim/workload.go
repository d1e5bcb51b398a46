package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Request is one inference request as a workload produces it.
type Request struct {
	ID      int     `json:"id"`
	Arrival float64 `json:"arrival"` // seconds from the start of the run
	Prompt  int     `json:"prompt"`  // prompt tokens
	Output  int     `json:"output"`  // tokens to generate, >= 1
	// Blocks names the request's content for prefix caching: entry i is a
	// chain hash of its tokens [0, (i+1)*BlockTokens) (equal entries, equal
	// prefixes), as vLLM's block hashes and Mooncake's hash_ids are. They
	// cover the prompt's full blocks, and may go on over the output's (a
	// later turn whose prompt repeats this answer then finds it cached).
	// ChainHashes builds them from segments of content; HashIDs from a
	// trace's integer ids. nil: the request shares nothing.
	Blocks []uint64 `json:"blocks,omitempty"`
	// BlockTokens is the tokens each Blocks entry covers (0: HashBlockTokens).
	BlockTokens int `json:"block_tokens,omitempty"`
}

// RequestHead is a request without its block names: what a Seq keeps of
// it (a Seq holds no pointer, so a run's many cost the collector nothing;
// the engine keeps the names apart).
type RequestHead struct {
	ID      int
	Arrival float64
	Prompt  int
	Output  int
}

// Head is r without its block names.
func (r *Request) Head() RequestHead {
	return RequestHead{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output}
}

// Limits on workload sizes, so absurd input gives an error instead of a hang.
const (
	MaxRequests = 1_000_000
	MaxTokens   = 10_000_000 // per prompt or output
	MaxRate     = 1e7        // req/s
)

// newRand is the one source of randomness: PCG, seeded, the same on every platform.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5e12e1ab)) }

// Poisson is an open-loop workload: n requests with exponential
// inter-arrival times at rate req/s and fixed lengths. The unit-rate gaps
// depend only on seed, so runs at different rates share their randomness and
// latency curves over rate are smooth.
func Poisson(n int, rate float64, prompt, output int, seed uint64) ([]Request, error) {
	return PoissonLengths(n, rate, Fixed(prompt), Fixed(output), seed)
}

// PoissonLengths is Poisson with prompt and output lengths drawn from distributions.
func PoissonLengths(n int, rate float64, prompt, output Lengths, seed uint64) ([]Request, error) {
	if n < 1 || n > MaxRequests {
		return nil, fmt.Errorf("requests must be in 1..%d, got %d", MaxRequests, n)
	}
	if !(rate > 0) || rate > MaxRate {
		return nil, fmt.Errorf("rate must be in (0, %g] req/s, got %g", MaxRate, rate)
	}
	if err := prompt.validate("prompt"); err != nil {
		return nil, err
	}
	if err := output.validate("output"); err != nil {
		return nil, err
	}
	arrivals := newRand(seed)
	lens := newRand(seed ^ 0x9e3779b97f4a7c15)
	reqs := make([]Request, n)
	t := 0.0
	for i := range reqs {
		t += arrivals.ExpFloat64() / rate
		reqs[i] = Request{ID: i, Arrival: t, Prompt: prompt.draw(lens), Output: output.draw(lens)}
	}
	return reqs, nil
}

// PoissonDraws is a Poisson workload's randomness drawn once, for a search
// that runs it at many rates: PoissonLengths at any rate sums the same unit
// gaps over the rate and draws the same lengths, so Fill gives its requests
// bit for bit without drawing again.
type PoissonDraws struct {
	gaps           []float64
	prompt, output []int
	reqs           []Request // the last requests given (each experiment's are read before the next)
}

// DrawPoisson draws what PoissonLengths would for n requests. It returns
// an error when PoissonLengths would (callers then build the workload the
// ordinary way, and report its error).
func DrawPoisson(n int, prompt, output Lengths, seed uint64) (*PoissonDraws, error) {
	if _, err := PoissonLengths(1, 1, prompt, output, seed); err != nil || n < 1 || n > MaxRequests {
		return nil, fmt.Errorf("workload cannot be drawn") // (callers then build it the ordinary way, error and all)
	}
	arrivals := newRand(seed)
	lens := newRand(seed ^ 0x9e3779b97f4a7c15)
	d := &PoissonDraws{gaps: make([]float64, n), prompt: make([]int, n), output: make([]int, n), reqs: make([]Request, n)}
	for i := range n { // in PoissonLengths' order: the gap, then the prompt, then the output
		d.gaps[i] = arrivals.ExpFloat64()
		d.prompt[i] = prompt.draw(lens)
		d.output[i] = output.draw(lens)
	}
	return d, nil
}

// PoissonSearch is PoissonLengths as a search's workload: the randomness is
// drawn once, and each call's requests (bit for bit PoissonLengths' at that
// rate) replace the previous call's, so a search reads each experiment's
// before the next. A workload that cannot be drawn gives PoissonLengths'
// error at every rate.
func PoissonSearch(n int, prompt, output Lengths, seed uint64) Workload {
	d, err := DrawPoisson(n, prompt, output, seed)
	if err != nil {
		return func(rate float64) ([]Request, error) { return PoissonLengths(n, rate, prompt, output, seed) }
	}
	return d.at
}

// at is PoissonLengths at rate, in the requests of the previous call.
func (d *PoissonDraws) at(rate float64) (reqs []Request, err error) {
	reqs, err = d.Fill(d.reqs, rate)
	if err == nil {
		d.reqs = reqs
	}
	return reqs, err
}

// Fill returns PoissonLengths' requests at rate, written over reqs (grown
// if short). The draws are only read, so callers in parallel may fill
// their own buffers.
func (d *PoissonDraws) Fill(reqs []Request, rate float64) ([]Request, error) {
	if !(rate > 0) || rate > MaxRate {
		return nil, fmt.Errorf("rate must be in (0, %g] req/s, got %g", MaxRate, rate)
	}
	reqs = slices.Grow(reqs[:0], len(d.gaps))[:len(d.gaps)]
	t := 0.0
	for i := range reqs {
		t += d.gaps[i] / rate
		reqs[i] = Request{ID: i, Arrival: t, Prompt: d.prompt[i], Output: d.output[i]}
	}
	return reqs, nil
}

// Lengths is a token-length distribution: fixed, uniform or log-normal.
type Lengths struct {
	Kind  string  `json:"kind"` // "fixed", "uniform", "lognormal"
	Value int     `json:"value,omitempty"`
	Min   int     `json:"min,omitempty"`   // uniform and lognormal lower clamp
	Max   int     `json:"max,omitempty"`   // uniform and lognormal upper clamp
	Mu    float64 `json:"mu,omitempty"`    // lognormal: mean of ln(length)
	Sigma float64 `json:"sigma,omitempty"` // lognormal: stddev of ln(length)
}

// Fixed is the distribution that is always n.
func Fixed(n int) Lengths { return Lengths{Kind: "fixed", Value: n} }

// Uniform draws integers in [lo, hi].
func Uniform(lo, hi int) Lengths { return Lengths{Kind: "uniform", Min: lo, Max: hi} }

// LogNormal draws round(exp(N(mu, sigma))) clamped to [lo, hi].
func LogNormal(mu, sigma float64, lo, hi int) Lengths {
	return Lengths{Kind: "lognormal", Mu: mu, Sigma: sigma, Min: lo, Max: hi}
}

func (l Lengths) validate(what string) error {
	in := func(v int) bool { return v >= 1 && v <= MaxTokens }
	switch l.Kind {
	case "fixed", "":
		if !in(l.Value) {
			return fmt.Errorf("%s length must be in 1..%d, got %d", what, MaxTokens, l.Value)
		}
	case "uniform", "lognormal":
		if !in(l.Min) || !in(l.Max) || l.Min > l.Max {
			return fmt.Errorf("%s length range must satisfy 1 <= min <= max <= %d, got %d..%d", what, MaxTokens, l.Min, l.Max)
		}
		if l.Kind == "lognormal" && (!finite(l.Mu) || !(l.Sigma >= 0) || l.Sigma > 10) {
			return fmt.Errorf("%s log-normal needs finite mu and sigma in [0, 10], got mu=%g sigma=%g", what, l.Mu, l.Sigma)
		}
	default:
		return fmt.Errorf("%s length distribution %q unknown; valid: fixed, uniform, lognormal", what, l.Kind)
	}
	return nil
}

func (l Lengths) draw(r *rand.Rand) int {
	switch l.Kind {
	case "uniform":
		return l.Min + r.IntN(l.Max-l.Min+1)
	case "lognormal":
		v := math.Round(math.Exp(l.Mu + l.Sigma*r.NormFloat64()))
		return int(math.Max(float64(l.Min), math.Min(float64(l.Max), v)))
	}
	return l.Value
}

// String reads like the distribution's definition.
func (l Lengths) String() string {
	switch l.Kind {
	case "uniform":
		return fmt.Sprintf("uniform(%d..%d)", l.Min, l.Max)
	case "lognormal":
		return fmt.Sprintf("lognormal(mu=%g, sigma=%g, %d..%d)", l.Mu, l.Sigma, l.Min, l.Max)
	}
	return fmt.Sprintf("%d", l.Value)
}

// ParseLengths reads a distribution spec: "512" or "fixed:512",
// "uniform:LO,HI", or "lognormal:MU,SIGMA,LO,HI".
func ParseLengths(spec string) (Lengths, error) {
	kind, args, found := strings.Cut(strings.TrimSpace(spec), ":")
	if !found {
		kind, args = "fixed", kind
	}
	parts := strings.Split(args, ",")
	nums := make([]float64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !finite(v) {
			return Lengths{}, fmt.Errorf("length spec %q: %q is not a number", spec, p)
		}
		nums[i] = v
	}
	want := map[string]int{"fixed": 1, "uniform": 2, "lognormal": 4}[kind]
	if want == 0 || len(nums) != want {
		return Lengths{}, fmt.Errorf("length spec %q: want N, fixed:N, uniform:LO,HI or lognormal:MU,SIGMA,LO,HI", spec)
	}
	asInt := func(v float64) int { return int(math.Max(-1, math.Min(v, 2*MaxTokens))) }
	var l Lengths
	switch kind {
	case "fixed":
		l = Fixed(asInt(nums[0]))
	case "uniform":
		l = Uniform(asInt(nums[0]), asInt(nums[1]))
	default:
		l = LogNormal(nums[0], nums[1], asInt(nums[2]), asInt(nums[3]))
	}
	return l, l.validate("length spec " + strconv.Quote(spec))
}
