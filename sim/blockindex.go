package sim

import "math/bits"

// blockIndex maps a cached block's name (a hash already) to its entry in
// the prefix cache: open addressing, linear probing, deletion by shifting
// the probe run back (no tombstones), grown at 3/4 full. It does what a
// map[uint64]int32 did, without hashing the key again: in a routed run
// with prefix caching the map's lookups and inserts were 40% of the time.
//
// Beside the keys, a byte a slot (its tag: empty, or 7 bits of the key
// that lives there) lets a probe pass a slot without reading its key. Most
// lookups are misses (a block just filled, checked before it is entered),
// and a miss then reads only the tags, a sixteenth of the memory: with the
// keys alone each miss was a cache miss, a third of a routed run's time.
type blockIndex struct {
	tags  []uint8  // 0: empty; else tagOf(the key there)
	keys  []uint64 // a power of two of them
	vals  []int32
	shift uint8 // 64 - log2(len(keys)): a key's home is its top bits after a multiply
	n     int
}

// tagOf is the tag of key: its low 7 bits (the home takes the top bits)
// with the high bit set, so that no tag is 0.
func tagOf(key uint64) uint8 { return uint8(key)&0x7f | 0x80 }

// home is key's first slot. (Fibonacci hashing: the multiply spreads any
// regularity left in the names over the top bits.)
func (x *blockIndex) home(key uint64) int {
	return int((key * 0x9E3779B97F4A7C15) >> x.shift)
}

// get is key's entry, and whether key is in the index.
func (x *blockIndex) get(key uint64) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask, tag := len(x.tags)-1, tagOf(key)
	for i := x.home(key); ; i = (i + 1) & mask {
		switch t := x.tags[i]; {
		case t == 0:
			return 0, false
		case t == tag && x.keys[i] == key:
			return x.vals[i], true
		}
	}
}

// put sets key's entry.
func (x *blockIndex) put(key uint64, val int32) {
	if 4*(x.n+1) > 3*len(x.tags) {
		x.grow()
	}
	mask, tag := len(x.tags)-1, tagOf(key)
	for i := x.home(key); ; i = (i + 1) & mask {
		switch t := x.tags[i]; {
		case t == 0:
			x.tags[i], x.keys[i], x.vals[i] = tag, key, val
			x.n++
			return
		case t == tag && x.keys[i] == key:
			x.vals[i] = val
			return
		}
	}
}

// del removes key (if there): the slots after it in its probe run move
// back where their own home allows, so every key stays reachable.
func (x *blockIndex) del(key uint64) {
	if x.n == 0 {
		return
	}
	mask, tag := len(x.tags)-1, tagOf(key)
	i := x.home(key)
	for ; ; i = (i + 1) & mask {
		t := x.tags[i]
		if t == 0 {
			return
		}
		if t == tag && x.keys[i] == key {
			break
		}
	}
	for j := (i + 1) & mask; x.tags[j] != 0; j = (j + 1) & mask {
		// The key at j may fill the hole at i if its home is not in (i, j]
		// (cyclically): its probe from home then passes i.
		if h := x.home(x.keys[j]); (j-h)&mask >= (j-i)&mask {
			x.tags[i], x.keys[i], x.vals[i] = x.tags[j], x.keys[j], x.vals[j]
			i = j
		}
	}
	x.tags[i] = 0
	x.n--
}

// len is the number of keys.
func (x *blockIndex) len() int { return x.n }

// alloc makes the index empty with size slots (a power of two).
func (x *blockIndex) alloc(size int) {
	x.tags, x.keys, x.vals = make([]uint8, size), make([]uint64, size), make([]int32, size)
	x.shift, x.n = uint8(64-bits.TrailingZeros(uint(size))), 0
}

// reserve makes an empty index room for n keys without growing.
func (x *blockIndex) reserve(n int) {
	size := 64
	for 4*n > 3*size {
		size *= 2
	}
	x.alloc(size)
}

// grow doubles the slots (to 64 at first) and enters every key again.
func (x *blockIndex) grow() {
	tags, keys, vals := x.tags, x.keys, x.vals
	x.alloc(max(64, 2*len(tags)))
	for i, t := range tags {
		if t != 0 {
			x.put(keys[i], vals[i])
		}
	}
}
