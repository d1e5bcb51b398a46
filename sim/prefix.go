package sim

// Prefix caching (vLLM's automatic prefix caching, SGLang's RadixAttention).
//
// A KV block is named by its content: a chain hash over the full blocks of
// tokens up to and including it, so equal names mean equal prefixes. A
// request carries those names (Request.Blocks). When it starts its prefill
// the engine looks up its longest prefix of full blocks already in the
// cache, shares them and prefills only the rest; the chunks it computes
// still attend over the cached KV, so each step's attention is priced over
// the whole context. A block is entered in the cache when it is full: a
// prompt's at the end of the chunk that fills it, an output's when the
// sequence leaves the engine. A block nobody holds stays cached, free to be
// taken: the allocator takes never-used blocks first and then evicts the
// least recently freed, as vLLM's free-block queue does.
//
// The KV accounting is the engine's own (freeKV counts blocks no sequence
// holds, cached or not), so with the cache off nothing changes; on, a
// sequence's blocks are the cached ones it shares (Seq.pc's held) and
// anonymous ones.

// HashBlockTokens is the tokens each Request.Blocks entry covers when
// Request.BlockTokens is 0 (vLLM's default block size).
const HashBlockTokens = 16

// HashIDs returns a trace's integer block hashes (Mooncake's hash_ids) as
// Request.Blocks: r.Blocks, r.BlockTokens = HashIDs(ids), 512 replays a
// Mooncake request whose hash_ids cover 512 tokens each.
func HashIDs(ids []int) []uint64 {
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = uint64(id)
	}
	return out
}

// mix is splitmix64's finaliser over a^b*golden: a well-spread 64-bit
// function of two words.
func mix(a, b uint64) uint64 {
	z := a ^ (b+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Segment is a run of Tokens tokens of one piece of content (a system
// prompt, one user message, one answer), named by ID: two segments with
// the same ID hold the same tokens.
type Segment struct {
	ID     uint64
	Tokens int
}

// ChainHashes returns the chain hashes of the full blocks of blockTokens
// tokens of the content segs lays end to end: entry i names tokens
// [0, (i+1)*blockTokens), so two contents share entry i exactly when their
// first (i+1)*blockTokens tokens are the same segments' same tokens. A
// trailing partial block has none.
func ChainHashes(segs []Segment, blockTokens int) []uint64 {
	if blockTokens < 1 {
		blockTokens = HashBlockTokens
	}
	total := 0
	for _, s := range segs {
		total += max(s.Tokens, 0)
	}
	out := make([]uint64, 0, total/blockTokens)
	h, fill := uint64(0x51ed2701), 0 // the chain so far, and tokens in the block being named
	for _, s := range segs {
		for off := 0; off < s.Tokens; {
			n := min(s.Tokens-off, blockTokens-fill)
			h = mix(mix(h, s.ID), uint64(off)<<32|uint64(n)) // these n tokens of s, from off
			off += n
			fill += n
			if fill == blockTokens {
				out = append(out, h)
				fill = 0
			}
		}
	}
	return out
}

// PrefixStats are a run's prefix-cache figures, in tokens and blocks.
type PrefixStats struct {
	// Queried is the prompt tokens of every prefill that started (a
	// recomputation after a preemption counts again), Hit those of them
	// found in the cache: Hit/Queried is vLLM's prefix-cache hit rate.
	Queried int `json:"queried_tokens"`
	Hit     int `json:"hit_tokens"`
	// Evicted is the cached blocks dropped to make room.
	Evicted int `json:"evicted_blocks"`
	// Cached is the blocks in the cache at the end (held or free).
	Cached int `json:"cached_blocks"`
}

// HitRatio is Hit/Queried (0 when nothing was queried).
func (p PrefixStats) HitRatio() float64 {
	if p.Queried == 0 {
		return 0
	}
	return float64(p.Hit) / float64(p.Queried)
}

// pcEntry is one cached block.
type pcEntry struct {
	key        uint64
	ref        int32 // sequences holding it; -1: evicted (a spare entry)
	prev, next int32 // the free list (ref 0), least recently freed first; -1 ends
}

// pcSeq is what the cache keeps of one sequence.
type pcSeq struct {
	blocks []uint64 // the request's Blocks
	per    int      // tokens per blocks entry
	held   []int32  // the cache entries it holds
	reg    int      // its blocks before this one are held or were offered to the cache
	fresh  int      // tokens its prefill starts with from the cache, until its first chunk is priced
}

// prefixCache is the engine's cache of blocks by content.
type prefixCache struct {
	on      bool
	bs      int
	limited bool // the engine has a KV limit (else nothing is ever evicted)
	index   blockIndex
	entries []pcEntry
	spare   []int32 // unused entries
	head    int32   // least recently freed
	tail    int32
	free    int // entries with ref 0 (cached, free)
	seqs    []pcSeq
	stats   PrefixStats
}

// init turns the cache on for an engine of limits l. With a KV limit the
// cache never holds more blocks than the engine has, so its index and
// entries are made that size at once: grown a doubling at a time they were
// a quarter of a routed run's time (every key entered again at each).
func (c *prefixCache) init(l Limits) {
	*c = prefixCache{on: true, bs: l.BlockSize, limited: l.KVBlocks > 0, head: -1, tail: -1}
	if c.limited {
		c.index.reserve(l.KVBlocks)
		c.entries = make([]pcEntry, 0, l.KVBlocks)
	}
}

// key is the name of block b of q (ok false when its tokens go past what
// q's Blocks name: a block that ends inside an entry takes that entry's
// name only if the entry is full within the request's content).
func (c *prefixCache) key(q *pcSeq, b int) (uint64, bool) {
	k := ((b+1)*c.bs - 1) / q.per
	if k >= len(q.blocks) {
		return 0, false
	}
	return mix(q.blocks[k], uint64(b)), true
}

// unlink takes entry i off the free list.
func (c *prefixCache) unlink(i int32) {
	e := &c.entries[i]
	if e.prev >= 0 {
		c.entries[e.prev].next = e.next
	} else {
		c.head = e.next
	}
	if e.next >= 0 {
		c.entries[e.next].prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = -1, -1
	c.free--
}

// push puts entry i at the free list's tail (most recently freed).
func (c *prefixCache) push(i int32) {
	e := &c.entries[i]
	e.prev, e.next = c.tail, -1
	if c.tail >= 0 {
		c.entries[c.tail].next = i
	} else {
		c.head = i
	}
	c.tail = i
	c.free++
}

// add enters a block held by one sequence and returns its entry.
func (c *prefixCache) add(key uint64) int32 {
	var i int32
	if n := len(c.spare); n > 0 {
		i = c.spare[n-1]
		c.spare = c.spare[:n-1]
	} else {
		c.entries = append(c.entries, pcEntry{})
		i = int32(len(c.entries) - 1)
	}
	c.entries[i] = pcEntry{key: key, ref: 1, prev: -1, next: -1}
	c.index.put(key, i)
	return i
}

// lookup is key's entry and whether key is cached. It tries entry hint
// first: the entry after the one of a sequence's block before, as blocks
// entered one after another take entries one after another, so that a
// long cached history is mostly found without a probe of the index (whose
// random reads were a third of a routed run's time).
func (c *prefixCache) lookup(key uint64, hint int32) (int32, bool) {
	if hint >= 0 && int(hint) < len(c.entries) {
		if en := &c.entries[hint]; en.key == key && en.ref >= 0 {
			return hint, true
		}
	}
	return c.index.get(key)
}

// evict drops the least recently freed block.
func (c *prefixCache) evict() {
	i := c.head
	c.unlink(i)
	c.index.del(c.entries[i].key)
	c.entries[i].ref = -1
	c.spare = append(c.spare, i)
	c.stats.Evicted++
}

// pcOf is s's record in the cache (nil: caching off or s has no Blocks).
func (e *Engine) pcOf(s *Seq) *pcSeq {
	if s.pc == 0 {
		return nil
	}
	return &e.pc.seqs[s.pc-1]
}

// pcSubmit keeps the block names of s's request r when caching is on.
func (e *Engine) pcSubmit(s *Seq, r *Request) {
	if !e.pc.on || len(r.Blocks) == 0 || e.role == DecodeOnly {
		return
	}
	per := r.BlockTokens
	if per < 1 {
		per = HashBlockTokens
	}
	e.pc.seqs = append(e.pc.seqs, pcSeq{blocks: r.Blocks, per: per})
	s.pc = int32(len(e.pc.seqs))
}

// reuse attaches the longest cached prefix of s's full blocks when s
// starts its prefill (holding nothing) and returns the prefill tokens s
// still needs. At least the last token is always computed, as vLLM does.
func (e *Engine) reuse(s *Seq) int {
	q := e.pcOf(s)
	if q == nil || s.kv > 0 || s.blocks > 0 {
		return s.Remaining()
	}
	c := &e.pc
	c.stats.Queried += s.need
	h, hint := 0, int32(-1)
	for b := 0; b < (s.need-1)/c.bs; b++ {
		key, ok := c.key(q, b)
		if !ok {
			break
		}
		i, ok := c.lookup(key, hint)
		if !ok {
			break
		}
		hint = i + 1
		en := &c.entries[i]
		if en.ref == 0 {
			c.unlink(i)
			if c.limited {
				e.freeKV--
			}
		}
		en.ref++
		q.held = append(q.held, i)
		h++
	}
	q.reg = h
	tokens := h * c.bs
	c.stats.Hit += tokens
	s.blocks, s.kv, s.prefilled = h, tokens, tokens
	q.fresh = tokens
	if s.preempted == 0 {
		s.cached = int32(tokens)
	}
	return s.Remaining()
}

// pcRegister enters s's full blocks not yet offered to the cache, as far
// as its Blocks name them; a block already cached (another sequence filled
// the same one) stays s's own and is not cached twice.
func (e *Engine) pcRegister(s *Seq) {
	q := e.pcOf(s)
	if q == nil {
		return
	}
	c := &e.pc
	full := s.kv / c.bs
	for ; q.reg < full; q.reg++ {
		key, ok := c.key(q, q.reg)
		if !ok {
			q.reg = full
			break
		}
		hint := int32(-1)
		if n := len(q.held); n > 0 {
			hint = q.held[n-1] + 1
		}
		if _, dup := c.lookup(key, hint); !dup {
			q.held = append(q.held, c.add(key))
		}
	}
}

// pcRelease gives back s's blocks: it offers its full blocks to the cache,
// lets go of the cached ones it holds (those nobody else holds go to the
// free list's tail) and returns how many blocks this frees.
func (e *Engine) pcRelease(s *Seq) int {
	q := e.pcOf(s)
	if q == nil {
		return s.blocks
	}
	e.pcRegister(s)
	c := &e.pc
	freed := s.blocks - len(q.held)
	for _, i := range q.held {
		en := &c.entries[i]
		if en.ref--; en.ref == 0 {
			c.push(i)
			freed++
		}
	}
	q.held, q.reg, q.fresh = q.held[:0], 0, 0
	return freed
}

// pcTrim evicts cached free blocks until the free blocks can hold them:
// call it after freeKV falls.
func (e *Engine) pcTrim() {
	c := &e.pc
	for c.limited && c.free > e.freeKV && c.free > 0 {
		c.evict()
	}
}

// PrefixStats returns the run's prefix-cache figures so far (nil with
// caching off).
func (e *Engine) PrefixStats() *PrefixStats {
	if !e.pc.on {
		return nil
	}
	s := e.pc.stats
	s.Cached = e.pc.index.len()
	return &s
}

// PrefixHit reports the tokens of blocks the engine's cache would give a
// request with these block names and prompt length now (a router's look
// into a replica), without touching the cache.
func (e *Engine) PrefixHit(r *Request) int {
	c := &e.pc
	if !c.on || len(r.Blocks) == 0 {
		return 0
	}
	q := pcSeq{blocks: r.Blocks, per: r.BlockTokens}
	if q.per < 1 {
		q.per = HashBlockTokens
	}
	h := 0
	for b := 0; b < (r.Prompt-1)/c.bs; b++ {
		key, ok := c.key(&q, b)
		if !ok {
			break
		}
		if _, ok := c.index.get(key); !ok {
			break
		}
		h++
	}
	return h * c.bs
}
