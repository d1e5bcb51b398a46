package sim

import "math/bits"

// blockIndex maps a cached block's name (a hash already) to its entry in
// the prefix cache: open addressing, linear probing, deletion by shifting
// the probe run back (no tombstones), grown at 3/4 full. It does what a
// map[uint64]int32 did, without hashing the key again: in a routed run
// with prefix caching the map's lookups and inserts were 40% of the time.
type blockIndex struct {
	slots []blockSlot // a power of two of them
	shift uint8       // 64 - log2(len(slots)): a key's home is its top bits after a multiply
	n     int
}

// blockSlot is one slot: a name and its entry, when used.
type blockSlot struct {
	key  uint64
	val  int32
	used bool
}

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
	mask := len(x.slots) - 1
	for i := x.home(key); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if !s.used {
			return 0, false
		}
		if s.key == key {
			return s.val, true
		}
	}
}

// put sets key's entry.
func (x *blockIndex) put(key uint64, val int32) {
	if 4*(x.n+1) > 3*len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	for i := x.home(key); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if !s.used {
			*s = blockSlot{key: key, val: val, used: true}
			x.n++
			return
		}
		if s.key == key {
			s.val = val
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
	mask := len(x.slots) - 1
	i := x.home(key)
	for ; ; i = (i + 1) & mask {
		if !x.slots[i].used {
			return
		}
		if x.slots[i].key == key {
			break
		}
	}
	for j := (i + 1) & mask; x.slots[j].used; j = (j + 1) & mask {
		// The key at j may fill the hole at i if its home is not in (i, j]
		// (cyclically): its probe from home then passes i.
		if h := x.home(x.slots[j].key); (j-h)&mask >= (j-i)&mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = blockSlot{}
	x.n--
}

// len is the number of keys.
func (x *blockIndex) len() int { return x.n }

// grow doubles the slots (to 64 at first) and enters every key again.
func (x *blockIndex) grow() {
	old := x.slots
	size := max(64, 2*len(old))
	x.slots, x.shift, x.n = make([]blockSlot, size), uint8(64-bits.TrailingZeros(uint(size))), 0
	for _, s := range old {
		if s.used {
			x.put(s.key, s.val)
		}
	}
}
