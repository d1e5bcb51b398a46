package sim

import (
	"math/rand/v2"
	"testing"
)

// TestBlockIndexIsAMap runs the same random puts, deletes and gets on a
// blockIndex and a map, with keys crowded into few homes (so that probe
// runs wrap around the table and deletions shift them back) and keys
// spread as the cache's names are.
func TestBlockIndexIsAMap(t *testing.T) {
	for _, spread := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		var x blockIndex
		m := map[uint64]int32{}
		key := func() uint64 {
			if spread {
				return rng.Uint64() % 5000 * 0x9E3779B97F4A7C15
			}
			return rng.Uint64() % 300 // many collide in a small table's slots
		}
		for op := 0; op < 200_000; op++ {
			k := key()
			switch rng.IntN(3) {
			case 0:
				v := int32(rng.IntN(1 << 20))
				x.put(k, v)
				m[k] = v
			case 1:
				x.del(k)
				delete(m, k)
			}
			got, ok := x.get(k)
			want, wantOK := m[k]
			if ok != wantOK || got != want {
				t.Fatalf("spread %v, op %d: key %d is %d %v, want %d %v", spread, op, k, got, ok, want, wantOK)
			}
			if x.len() != len(m) {
				t.Fatalf("spread %v, op %d: %d keys, want %d", spread, op, x.len(), len(m))
			}
		}
		for k, want := range m {
			if got, ok := x.get(k); !ok || got != want {
				t.Fatalf("spread %v: key %d is %d %v at the end, want %d", spread, k, got, ok, want)
			}
		}
	}
}

// TestBlockIndexWrapsAround crowds keys into the last slot's home and the
// first's, so that their probe runs wrap past the table's end, then
// deletes them in every third order and checks the rest stay reachable.
func TestBlockIndexWrapsAround(t *testing.T) {
	var mul, inv uint64 = 0x9E3779B97F4A7C15, 0xF1DE83E19937733D // inv: mul's inverse mod 2^64
	if mul*inv != 1 {
		t.Fatal("not the inverse")
	}
	at := func(home, j uint64) uint64 { return (home<<58 | j) * inv } // (64 slots: shift 58)
	var keys []uint64
	for j := uint64(0); j < 12; j++ {
		keys = append(keys, at(63, j), at(0, j+100))
	}
	for start := 0; start < 3; start++ {
		var x blockIndex
		for i, k := range keys {
			x.put(k, int32(i))
		}
		if len(x.keys) != 64 || x.home(keys[0]) != 63 || x.home(keys[1]) != 0 {
			t.Fatalf("%d slots, homes %d and %d: the test's keys do not crowd where meant", len(x.keys), x.home(keys[0]), x.home(keys[1]))
		}
		gone := map[int]bool{}
		for i := start; i < len(keys); i += 3 {
			x.del(keys[i])
			gone[i] = true
			for k, key := range keys {
				v, ok := x.get(key)
				if ok == gone[k] || ok && v != int32(k) {
					t.Fatalf("start %d, after deleting key %d: key %d is %d %v", start, i, k, v, ok)
				}
			}
		}
	}
}
