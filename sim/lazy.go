package sim

import (
	"cmp"
	"math"
	"slices"
)

// Lazy bookkeeping of the running batch. In a whole run that keeps no trace
// and no token times, under a shipped policy, with no KV preemption, every
// decode step decodes every running sequence. Each then gets a token at
// every such step's end, so one shared list of those ends (the decode clock)
// says what each sequence has: a sequence records when it joined the batch,
// and its counts, last token time and largest gap are brought up to date
// (settled) only when something reads them — when it finishes, when the
// run ends, or when a step decodes only part of the batch, which ends lazy
// mode. A step then costs the same for 10 sequences or 1000.
//
// Settling replays exactly what emit would have done token by token: the
// same subtractions of the same times, so results are bit for bit those of
// the plain path (tests compare).

// lazyState is the decode clock and the sequences due to finish.
type lazyState struct {
	on    bool      // the running batch is settled lazily
	ok    bool      // this run may go lazy (Engine.allowLazy)
	n     int       // decode steps of the whole batch since lazy mode began
	ends  []float64 // the ends of steps base..n-1 (a window: no running sequence reads earlier ones)
	base  int       // the step ends[0] ended
	fresh int       // sequences that joined since the last of them (their first gap is their own)
	peaks []peak    // suffix maxima of the gaps between consecutive ends
	due   []*Seq    // by the decode step at which each finishes: a queue while joins come in that order, else a min-heap
	head  int       // queue: the first still due
	heap  bool
	// items: the iteration's items begin with the last lazy step's decode
	// items, none finished (a traced run's next such step of the same batch
	// reuses them)
	items bool
}

// peak is a gap between decode steps i-1 and i that no later gap exceeds.
type peak struct {
	i   int
	gap float64
}

// allowLazy lets this run settle its batch lazily when it can: the caller
// reads no items, token times or online state until the run ends.
func (e *Engine) allowLazy() { e.lz.ok = e.noItems && !e.cfg.Trace && e.lazyFits() }

// SettleLazily lets a traced run that is stepped by a driver settle its
// running batch lazily when it can (as a whole run without a trace does):
// call it before the first Step when the driver reads, between steps, only
// the iterations Step returns (their items and largest gap are exact), and
// each sequence's state (results, gap counts) only through Results and
// Gaps. The page's traced runs and their lab loop are such drivers; an
// online server, which streams each request's tokens as they come, is not.
func (e *Engine) SettleLazily() { e.lz.ok = e.role == Colocated && e.lazyFits() }

// lazyFits is whether every decode step of the whole batch is one that
// lazy mode can account for: no token times kept, no preemption, a shipped
// policy, and no sliding window (a window prices each decode by its
// sequence's own KV length, which lazy mode does not keep up to date).
func (e *Engine) lazyFits() bool {
	l := e.cfg.Limits
	return !e.cfg.RecordTokens && !(l.KVBlocks > 0 && l.Preempt) && e.shippedPolicy() && e.cfg.Step.Model.SlidingWindow == 0 && !e.cfg.Spec.On()
}

// lazyItems writes a lazy decode step's items, one per running sequence in
// the batch's order (decodeAll's), into it, each Done if it finished at
// this step (settled, so its count is exact; the others' stale counts are
// below their outputs anyway). When same, the batch is the last lazy
// step's and nobody finished: its items, still at the front of it.Items,
// are this step's.
func (e *Engine) lazyItems(it *Iteration, same bool) {
	n := len(e.running)
	if same && cap(it.Items) >= n+len(e.plan.Chunks) {
		it.Items = it.Items[:n]
	} else {
		items := slices.Grow(it.Items[:0], n+len(e.plan.Chunks))[:n]
		for k, s := range e.running {
			items[k] = Item{ID: s.Req.ID, Tokens: 1, Emit: true, Done: s.generated >= s.Req.Output}
		}
		it.Items = items
	}
	e.lz.items = e.done == 0
}

// lazyGap is the largest gap before the tokens a lazy decode step ending at
// end gives its batch (decodeAll's Iteration.MaxGap): the step since the
// last one for the sequences in both, and their own for those that joined
// since (the batch's last fresh ones, settled as they joined). Call it
// before lazyDecode, which starts a new count of the fresh.
func (e *Engine) lazyGap(end float64) float64 {
	z := &e.lz
	top := 0.0
	if k := len(z.ends); k > 0 && len(e.running) > z.fresh {
		top = end - z.ends[k-1]
	}
	for _, s := range e.running[len(e.running)-min(z.fresh, len(e.running)):] {
		if g := end - s.last; s.generated > 0 && g > top {
			top = g
		}
	}
	return top
}

// lazyEnter starts lazy mode with every running sequence settled.
func (e *Engine) lazyEnter() {
	z := &e.lz
	z.on = true
	z.restart()
	for _, s := range e.running {
		e.lazyJoin(s)
	}
}

// lazyLeave settles every running sequence and ends lazy mode.
func (e *Engine) lazyLeave() {
	for _, s := range e.running {
		e.settle(s)
	}
	e.lz.on = false
}

// restart empties the decode clock.
func (z *lazyState) restart() {
	z.n, z.base, z.ends, z.fresh, z.peaks = 0, 0, z.ends[:0], 0, z.peaks[:0]
	clear(z.due)
	z.due, z.head, z.heap = z.due[:0], 0, false
}

// lazyJoin enters a sequence that has just joined the batch, settled.
func (e *Engine) lazyJoin(s *Seq) {
	z := &e.lz
	if len(e.running) == 1 {
		z.restart() // the batch was empty: nobody reads the clock so far
	}
	s.from = int32(z.n)
	s.due = int32(z.n + max(s.Req.Output-s.generated, 1) - 1) // (a decode arrival with its one token still decodes once)
	z.fresh++
	if !z.heap {
		if len(z.due) == z.head || z.due[len(z.due)-1].due <= s.due {
			if len(z.due) == cap(z.due) && z.head > 0 { // a full queue moves down before it grows: it stays the batch's size
				n := copy(z.due, z.due[z.head:])
				clear(z.due[n:])
				z.due, z.head = z.due[:n], 0
			}
			z.due = append(z.due, s) // still in order: a queue
			return
		}
		// Out of order (lengths differ): a heap from here on.
		n := copy(z.due, z.due[z.head:])
		clear(z.due[n:])
		z.due, z.head, z.heap = z.due[:n], 0, true
		slices.SortFunc(z.due, func(a, b *Seq) int { return cmp.Compare(a.due, b.due) }) // a sorted slice is a heap
	}
	z.due = append(z.due, s)
	for i := len(z.due) - 1; i > 0; { // sift up
		p := (i - 1) / 2
		if z.due[p].due <= s.due {
			break
		}
		z.due[i], z.due[p] = z.due[p], s
		i = p
	}
}

// maxLazySteps bounds the decode clock: at that many steps every running
// sequence is settled and the clock starts again. The clock slides
// (lazySlide), but one sequence decoding all along would hold it wide; and
// the bound keeps a sequence's steps (Seq.from, Seq.due) in an int32, which
// the next line fails to compile without.
const maxLazySteps = 1 << 20

const _ uint32 = math.MaxInt32 - (maxLazySteps + MaxTokens)

// lazyDecode records one decode step of the whole batch of n, ending at
// end, and settles the sequences it finishes; it returns how many.
func (e *Engine) lazyDecode(n int, end float64) int {
	z := &e.lz
	if z.n == maxLazySteps {
		e.lazyLeave()
		e.lazyEnter()
	}
	if k := len(z.ends); k > 0 {
		gap := end - z.ends[k-1] // what emit measures for every sequence but the fresh ones
		for len(z.peaks) > 0 && z.peaks[len(z.peaks)-1].gap <= gap {
			z.peaks = z.peaks[:len(z.peaks)-1]
		}
		z.peaks = append(z.peaks, peak{z.n, gap})
		if e.cfg.CountGaps && n > z.fresh {
			e.countGap(gap, n-z.fresh)
		}
		if k == cap(z.ends) && k >= max(256, 2*len(e.running)) {
			e.lazySlide()
		}
	}
	z.ends = append(z.ends, end)
	step := z.n
	z.n++
	z.fresh = 0
	done := 0
	for len(z.due) > z.head && z.nextDue() == step {
		e.settle(z.popDue())
		done++
	}
	return done
}

// lazySlide drops the ends and peaks that no running sequence will read
// (those before the earliest step one is settled up to), when that frees
// half the clock: the clock then stays a window of a few outputs' steps, in
// cache, instead of one entry per step of a busy run. (It costs one pass
// over the batch; the caller makes that at most once per len(running) steps.)
func (e *Engine) lazySlide() {
	z := &e.lz
	lo := z.n
	for _, s := range e.running {
		lo = min(lo, int(s.from))
	}
	drop := lo - z.base
	if drop < len(z.ends)/2 {
		return // the window is wide: let the clock grow
	}
	z.ends = z.ends[:copy(z.ends, z.ends[drop:])]
	z.base = lo
	keep := 0 // maxGapFrom is asked from lo+1 on: the peaks before it are never read
	for keep < len(z.peaks) && z.peaks[keep].i <= lo {
		keep++
	}
	z.peaks = z.peaks[:copy(z.peaks, z.peaks[keep:])]
}

// popDue removes and returns the sequence due first.
func (z *lazyState) popDue() *Seq {
	if !z.heap {
		s := z.due[z.head]
		z.due[z.head] = nil
		z.head++
		return s
	}
	h := z.due
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = nil
	h = h[:last]
	for i := 0; ; { // sift down
		l, m := 2*i+1, i
		if l < len(h) && h[l].due < h[m].due {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].due < h[m].due {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	z.due = h
	return top
}

// nextDue is the decode step at which the first running sequence finishes.
func (z *lazyState) nextDue() int { return int(z.due[z.head].due) }

// maxGapFrom is the largest gap between decode steps i-1 and i over i >= from.
func (z *lazyState) maxGapFrom(from int) float64 {
	lo, hi := 0, len(z.peaks)
	for lo < hi {
		m := (lo + hi) / 2
		if z.peaks[m].i < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(z.peaks) {
		return 0
	}
	return z.peaks[lo].gap
}

// settle brings s up to date with the decode steps since it was last
// settled: what emit would have done at each of their ends.
func (e *Engine) settle(s *Seq) {
	z := &e.lz
	k := z.n - int(s.from)
	if !z.on || k <= 0 {
		return
	}
	first := z.ends[int(s.from)-z.base]
	gap := first - s.last // its own first gap (a running sequence has a token)
	if gap > s.maxITL {
		s.maxITL = gap
	}
	if e.cfg.CountGaps && (s.generated > 1 || e.role != DecodeOnly) {
		e.countGap(gap, 1) // as emit counts it
	}
	if k > 1 {
		if g := z.maxGapFrom(int(s.from) + 1); g > s.maxITL {
			s.maxITL = g
		}
	}
	if s.here == 0 {
		s.here = first
	}
	s.generated += k
	s.kv += k
	s.last = z.ends[len(z.ends)-1]
	s.from = int32(z.n)
}
