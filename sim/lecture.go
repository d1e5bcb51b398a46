package sim

import "fmt"

// Lecture is the interference lecture's setup: one model on one GPU, a
// Poisson workload of N requests with fixed prompt and output lengths.
type Lecture struct {
	Step   StepModel
	N      int
	Prompt int
	Output int
	Seed   uint64
	// reuse, when set, is memory the demos' runs reuse (see LectureJob.Run).
	reuse *Scratch
	// draws, when set, is the workload's randomness, drawn once for all the
	// jobs of Interference (every demo runs the same workload at its rates).
	draws *poissonDraws
}

// workload is the lecture's Poisson workload at one rate. With draws and
// memory it is built in the memory's request buffer: valid until the next
// call on that memory.
func (l Lecture) workload(rate float64) ([]Request, error) {
	if l.draws != nil && l.reuse != nil {
		reqs, err := l.draws.fill(l.reuse.reqs, rate)
		if err == nil {
			l.reuse.reqs = reqs
		}
		return reqs, err
	}
	return Poisson(l.N, rate, l.Prompt, l.Output, l.Seed)
}

// values is Values of one metric, in the memory's buffer when there is
// one: valid until the next call on that memory.
func (l Lecture) values(rs []Result, m Metric) []float64 {
	if l.reuse == nil {
		return Values(rs, m)
	}
	l.reuse.vals = valuesInto(l.reuse.vals, rs, m)
	return l.reuse.vals
}

// searchWorkload is workload for one search's experiments, one after
// another: the randomness is drawn once and each call's requests replace
// the last call's.
func (l Lecture) searchWorkload() Workload {
	if l.draws != nil && l.reuse != nil {
		return l.workload
	}
	return PoissonSearch(l.N, Fixed(l.Prompt), Fixed(l.Output), l.Seed)
}

// run simulates the lecture's workload at rate under policy p.
func (l Lecture) run(p Policy, rate float64) ([]Result, error) {
	return l.runOn(p, rate, l.reuse.runScratch())
}

// runOn is run on sc's memory (nil: fresh); its results are valid until sc's next run.
func (l Lecture) runOn(p Policy, rate float64, sc *scratch) ([]Result, error) {
	reqs, err := l.workload(rate)
	if err != nil {
		return nil, err
	}
	return l.runReqs(p, reqs, sc)
}

// runReqs simulates reqs under policy p on sc's memory (nil: fresh).
func (l Lecture) runReqs(p Policy, reqs []Request, sc *scratch) ([]Result, error) {
	o, err := run(Config{Step: l.Step, Policy: p}, reqs, sc)
	if err != nil {
		return nil, err
	}
	return o.Results, nil
}

// Demo1Row is one line of demo 1: a decode batch with one prompt of Prompt tokens in the same step.
type Demo1Row struct {
	Prompt          int     `json:"prompt"`
	DecodeOnly      float64 `json:"decode_only"`  // seconds, the decode batch alone
	Mixed           float64 `json:"mixed"`        // seconds, decode batch + the prefill
	PrefillOnly     float64 `json:"prefill_only"` // seconds, the prefill alone
	DecodeSlowdown  float64 `json:"decode_slowdown"`
	PrefillSlowdown float64 `json:"prefill_slowdown"`
	MixedBound      Bound   `json:"mixed_bound"`
}

// Demo1 is in-step interference: batch decodes at context ctx each, plus one prompt of each length.
func (l Lecture) Demo1(batch, ctx int, prompts []int) []Demo1Row {
	dec := l.Step.Decode(batch, batch*ctx)
	rows := make([]Demo1Row, len(prompts))
	for i, p := range prompts {
		mixed, pre := l.Step.Mixed(batch, batch*ctx, p), l.Step.Prefill(p)
		rows[i] = Demo1Row{Prompt: p, DecodeOnly: dec.Seconds, Mixed: mixed.Seconds, PrefillOnly: pre.Seconds,
			DecodeSlowdown: mixed.Seconds / dec.Seconds, PrefillSlowdown: mixed.Seconds / pre.Seconds, MixedBound: mixed.Bound}
	}
	return rows
}

// Demo2Row is one rate of demo 2: P90 latencies colocated and on single-phase instances.
type Demo2Row struct {
	Rate            float64 `json:"rate"`
	ColocatedTTFT90 float64 `json:"colocated_ttft_p90"`
	ColocatedTPOT90 float64 `json:"colocated_tpot_p90"`
	PrefillTTFT90   float64 `json:"prefill_only_ttft_p90"`
	DecodeTPOT90    float64 `json:"decode_only_tpot_p90"`
}

// Demo2Rate is demo 2 at one rate (rates are independent, so callers may run them in parallel).
func (l Lecture) Demo2Rate(rate float64) (Demo2Row, error) {
	row := Demo2Row{Rate: rate}
	sc := l.reuse.runScratch()    // each run's figures are taken before the next
	reqs, err := l.workload(rate) // the three runs share it (a run does not change its requests)
	if err != nil {
		return row, err
	}
	col, err := l.runReqs(PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}, reqs, sc)
	if err != nil {
		return row, err
	}
	row.ColocatedTTFT90 = percentile(l.values(col, TTFT), 90)
	row.ColocatedTPOT90 = percentile(l.values(col, TPOT), 90)
	pre, _ := l.runReqs(PrefillOnlyPolicy{MaxTokens: DefaultMaxPrefillTokens}, reqs, sc)
	row.PrefillTTFT90 = percentile(l.values(pre, TTFT), 90)
	dec, _ := l.runReqs(DecodeOnlyPolicy{}, reqs, sc)
	row.DecodeTPOT90 = percentile(l.values(dec, TPOT), 90)
	return row, nil
}

// Demo3Goodput is the goodput (req/s at 90% SLO attainment) of one kind of instance.
// Which says which: "colocated", "prefill-only" or "decode-only"; colocated
// is judged on both SLOs, the single-phase instances on their own one.
func (l Lecture) Demo3Goodput(which string, slo SLO, attainment float64) (float64, error) {
	var p Policy
	hi := 400.0
	switch which {
	case "colocated":
		p = PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}
	case "prefill-only":
		p = PrefillOnlyPolicy{MaxTokens: DefaultMaxPrefillTokens}
	case "decode-only":
		p, hi = DecodeOnlyPolicy{}, 2000
	default:
		return 0, fmt.Errorf("unknown instance kind %q", which)
	}
	g, _, err := instanceGoodput(Config{Step: l.Step, Policy: p}, l.searchWorkload(), Demo3SLO(which, slo), attainment, hi, l.reuse)
	return g, err
}

// Demo3SLO is the objective an instance kind of demo 3 is judged on:
// colocated on both, prefill-only on TTFT alone, decode-only on TPOT alone.
func Demo3SLO(which string, slo SLO) SLO {
	switch which {
	case "prefill-only":
		slo.TPOT = 0
	case "decode-only":
		slo.TTFT = 0
	}
	return slo
}

// Split is x prefill + y decode instances and their combined goodput.
type Split struct {
	Prefill int     `json:"prefill"`
	Decode  int     `json:"decode"`
	Total   float64 `json:"total"`   // req/s the pair sustains
	PerGPU  float64 `json:"per_gpu"` // Total / (Prefill + Decode)
}

// SplitArithmetic is the lecture's demo-3 account: x prefill and y decode
// instances sustain min(x*gPre, y*gDec), assuming perfect balancing and free KV transfer.
func SplitArithmetic(x, y int, gPre, gDec float64) Split {
	t := min(float64(x)*gPre, float64(y)*gDec)
	return Split{Prefill: x, Decode: y, Total: t, PerGPU: t / float64(x+y)}
}

// BestSplitArithmetic searches x, y in 1..maxEach for the highest per-GPU goodput
// (ties go to fewer GPUs).
func BestSplitArithmetic(gPre, gDec float64, maxEach int) Split {
	best := Split{}
	for x := 1; x <= maxEach; x++ {
		for y := 1; y <= maxEach; y++ {
			if s := SplitArithmetic(x, y, gPre, gDec); s.PerGPU > best.PerGPU*(1+1e-9) {
				best = s
			}
		}
	}
	return best
}

// BestSplitWithin is the best per-GPU split using at most gpus GPUs in all
// (ties go to fewer GPUs).
func BestSplitWithin(gPre, gDec float64, gpus int) Split {
	best := Split{}
	for x := 1; x < gpus; x++ {
		for y := 1; x+y <= gpus; y++ {
			if s := SplitArithmetic(x, y, gPre, gDec); s.PerGPU > best.PerGPU*(1+1e-9) {
				best = s
			}
		}
	}
	return best
}

// SimulatedSplit is the goodput of x prefill + y decode instances, fully
// simulated (least-loaded router, KV over the GPU's link). The search starts
// below guess, the arithmetic's estimate (pooling can beat it a little), and
// widens if the objective still holds at the ceiling.
func (l Lecture) SimulatedSplit(x, y int, slo SLO, attainment, guess float64) (Split, error) {
	c := Cluster{Step: l.Step, Prefill: x, Decode: y}
	hi := 1.5 * guess
	wl := l.searchWorkload()
	for {
		total, perGPU, saturated, err := clusterGoodput(c, wl, slo, attainment, hi, l.reuse)
		if err != nil || !saturated || hi >= MaxRate/4 {
			return Split{Prefill: x, Decode: y, Total: total, PerGPU: perGPU}, err
		}
		hi *= 4
	}
}

// Demo4Row is one policy line of demo 4.
type Demo4Row struct {
	Policy  string  `json:"policy"`
	Budget  int     `json:"budget"` // 0 for prefill-first
	TTFTP50 float64 `json:"ttft_p50"`
	TTFTP90 float64 `json:"ttft_p90"`
	TPOTP50 float64 `json:"tpot_p50"`
	TPOTP90 float64 `json:"tpot_p90"`
}

// Demo4Row runs demo 4's line for one budget at rate (budget 0: prefill-first).
// As in the lecture's simulator, the chunk budget limits the prefill tokens
// of a step and the decodes ride along (Chunked.ExcludeDecodes).
func (l Lecture) Demo4Row(rate float64, budget int) (Demo4Row, error) {
	var p Policy = PrefillFirst{MaxTokens: DefaultMaxPrefillTokens}
	if budget > 0 {
		p = Chunked{Budget: budget, ExcludeDecodes: true}
	}
	rs, err := l.run(p, rate)
	if err != nil {
		return Demo4Row{}, err
	}
	t50, t90, _ := Percentiles3(l.values(rs, TTFT))
	p50, p90, _ := Percentiles3(l.values(rs, TPOT))
	return Demo4Row{Policy: p.Name(), Budget: budget, TTFTP50: t50, TTFTP90: t90, TPOTP50: p50, TPOTP90: p90}, nil
}

// Demos are the settings of the lecture's demos that are not the workload:
// demo 1's decode batch and its prompts, demo 2's rates, demo 3's SLO and
// attainment, demo 4's rate and budgets (0 is prefill-first).
type Demos struct {
	Batch, Context int
	Prompts        []int
	Rates          []float64
	SLO            SLO
	Attainment     float64
	Rate4          float64
	Budgets        []int
}

// LectureDemos are the lecture's own settings, with the demo-3 SLO given.
func LectureDemos(slo SLO) Demos {
	return Demos{Batch: 32, Context: 700, Prompts: []int{128, 512, 1024, 2048},
		Rates: []float64{5, 10, 20, 30, 40, 50, 60}, SLO: slo, Attainment: 0.9,
		Rate4: 40, Budgets: []int{0, 256, 512, 1024, 2048}}
}

// Interference is everything the four demos compute: what `servelab demo
// interference --json` prints and what the page's chapters show.
type Interference struct {
	Model  string     `json:"model"`
	GPU    string     `json:"gpu"`
	Demo1  []Demo1Row `json:"demo1_in_step"`
	Demo2  []Demo2Row `json:"demo2_latency_vs_rate"`
	Demo3  Demo3      `json:"demo3_goodput"`
	Demo4  []Demo4Row `json:"demo4_chunked"`
	Config DemoConfig `json:"config"`
}

// Demo3 is demo 3's goodput per GPU: the single instances, the splits by
// the lecture's arithmetic, and the splits fully simulated.
type Demo3 struct {
	SLO        SLO     `json:"slo"`
	Colocated  float64 `json:"colocated"`
	Prefill    float64 `json:"prefill_only"`
	Decode     float64 `json:"decode_only"`
	Splits     []Split `json:"splits"`
	Best       Split   `json:"best"`
	Advantage  float64 `json:"best_over_colocated"`
	Attainment float64 `json:"attainment"`
	// Full simulations of splits (router, KV transfer over the GPU's link).
	Simulated []Split `json:"simulated"`
}

// DemoConfig is the workload the demos ran.
type DemoConfig struct {
	Requests int     `json:"requests"`
	Prompt   int     `json:"prompt"`
	Output   int     `json:"output"`
	Seed     uint64  `json:"seed"`
	Rate4    float64 `json:"demo4_rate"`
}

// LectureJob is one independent run of the demos: the jobs of a phase may
// run in any order or in parallel (each writes its own slot); Demo says
// which demo it fills, so a page can run only the one it shows.
type LectureJob struct {
	Demo int
	// Run runs the job; its runs reuse mem when it is not nil. One
	// Scratch must serve one job at a time: a caller running jobs one
	// after another passes the same, one running them in parallel gives
	// each worker its own (or nil).
	Run func(mem *Scratch) error
	// Key is everything the job reads beside its Lecture, and Out the slot
	// Run fills (*Demo2Row, *float64, *Split or *Demo4Row): the same
	// Lecture and Key give the same Out, so a caller may keep results.
	Key LectureJobKey
	Out any
}

// LectureJobKey is one job's inputs beside its Lecture (unused ones zero).
type LectureJobKey struct {
	Kind       string // "demo2", "demo3 colocated|prefill-only|decode-only", "demo3 split", "demo4"
	Rate       float64
	Budget     int
	SLO        SLO // for demo 3's single instances, the part the kind is judged on (Demo3SLO)
	Attainment float64
	X, Y       int     // a split's prefill and decode instances
	Guess      float64 // a split's search start (the arithmetic's total)
}

// drawn is l with its workload's randomness drawn, for jobs to share
// (when it cannot be drawn, each run draws its own and reports the error).
func (l Lecture) drawn() Lecture {
	l.draws, _ = drawPoisson(l.N, Fixed(l.Prompt), Fixed(l.Output), l.Seed)
	return l
}

// on is l with its runs on mem's memory.
func (l Lecture) on(mem *Scratch) Lecture {
	l.reuse = mem
	return l
}

// Interference returns the demos' result with demo 1 filled in and the jobs
// that fill demos 2, 3 (its single instances) and 4. After they ran,
// Demo3Splits does demo 3's arithmetic and returns its last jobs.
func (l Lecture) Interference(d Demos) (*Interference, []LectureJob) {
	res := &Interference{Model: l.Step.Model.Name, GPU: l.Step.GPU.Name,
		Demo1:  l.Demo1(d.Batch, d.Context, d.Prompts),
		Demo2:  make([]Demo2Row, len(d.Rates)),
		Demo4:  make([]Demo4Row, len(d.Budgets)),
		Config: DemoConfig{Requests: l.N, Prompt: l.Prompt, Output: l.Output, Seed: l.Seed, Rate4: d.Rate4}}
	res.Demo3.SLO, res.Demo3.Attainment = d.SLO, d.Attainment
	l = l.drawn()
	var jobs []LectureJob
	for _, k := range []struct {
		kind string
		dst  *float64
	}{{"colocated", &res.Demo3.Colocated}, {"prefill-only", &res.Demo3.Prefill}, {"decode-only", &res.Demo3.Decode}} {
		jobs = append(jobs, LectureJob{Demo: 3, Run: func(mem *Scratch) (err error) {
			*k.dst, err = l.on(mem).Demo3Goodput(k.kind, d.SLO, d.Attainment)
			return
		},
			Key: LectureJobKey{Kind: "demo3 " + k.kind, SLO: Demo3SLO(k.kind, d.SLO), Attainment: d.Attainment}, Out: k.dst})
	}
	for i, r := range d.Rates {
		jobs = append(jobs, LectureJob{Demo: 2, Run: func(mem *Scratch) (err error) { res.Demo2[i], err = l.on(mem).Demo2Rate(r); return },
			Key: LectureJobKey{Kind: "demo2", Rate: r}, Out: &res.Demo2[i]})
	}
	for i, b := range d.Budgets {
		jobs = append(jobs, LectureJob{Demo: 4, Run: func(mem *Scratch) (err error) { res.Demo4[i], err = l.on(mem).Demo4Row(d.Rate4, b); return },
			Key: LectureJobKey{Kind: "demo4", Rate: d.Rate4, Budget: b}, Out: &res.Demo4[i]})
	}
	return res, jobs
}

// Demo3Splits fills demo 3's splits by the arithmetic (1P+1D, 2P+1D, the
// best with up to 8 of each) from the single instances' goodput, and
// returns the jobs that simulate DistServe's 2P+1D and the best split in full.
func (l Lecture) Demo3Splits(res *Interference) []LectureJob {
	l = l.drawn()
	d := &res.Demo3
	d.Best = BestSplitArithmetic(d.Prefill, d.Decode, 8)
	d.Splits = []Split{SplitArithmetic(1, 1, d.Prefill, d.Decode), SplitArithmetic(2, 1, d.Prefill, d.Decode), d.Best}
	if d.Colocated > 0 {
		d.Advantage = d.Best.PerGPU / d.Colocated
	}
	splits := []Split{d.Splits[1]}
	if d.Best.Prefill != 2 || d.Best.Decode != 1 {
		splits = append(splits, d.Best)
	}
	d.Simulated = make([]Split, len(splits))
	jobs := make([]LectureJob, len(splits))
	for i, s := range splits {
		jobs[i] = LectureJob{Demo: 3, Run: func(mem *Scratch) (err error) {
			d.Simulated[i], err = l.on(mem).SimulatedSplit(s.Prefill, s.Decode, d.SLO, d.Attainment, s.Total)
			return
		}, Key: LectureJobKey{Kind: "demo3 split", SLO: d.SLO, Attainment: d.Attainment, X: s.Prefill, Y: s.Decode, Guess: s.Total}, Out: &d.Simulated[i]}
	}
	return jobs
}
