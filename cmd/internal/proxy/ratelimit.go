package proxy

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Bucket is one client's token-bucket state: the tokens left at Last (Unix
// milliseconds). It is two numbers so that any key-value store can hold it,
// including one that lives outside Go (the worker keeps it in JavaScript,
// because each request there runs in a fresh Go instance).
type Bucket struct {
	Tokens float64
	Last   int64
}

// Store keeps buckets between requests. Get and Put are called one after the
// other under the Limiter's lock; a store may forget keys (a forgotten client
// starts again with a full bucket).
type Store interface {
	Get(key string) (Bucket, bool)
	Put(key string, b Bucket)
}

// Limiter is a per-client token bucket: each client may make Burst requests
// at once and then one every 1/Rate seconds.
type Limiter struct {
	Rate  float64 // tokens added per second
	Burst float64 // bucket size
	store Store
	mu    sync.Mutex
}

// NewLimiter makes a limiter of perMinute requests a minute with bursts of
// burst, keeping its state in store.
func NewLimiter(perMinute, burst int, store Store) *Limiter {
	return &Limiter{Rate: float64(perMinute) / 60, Burst: float64(burst), store: store}
}

// Allow takes one token from key's bucket at time now. When the bucket is
// empty it returns false and how long until a token is back.
func (l *Limiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := now.UnixMilli()
	b, ok := l.store.Get(key)
	if !ok || b.Last > ms {
		b = Bucket{Tokens: l.Burst, Last: ms}
	}
	b.Tokens += float64(ms-b.Last) / 1000 * l.Rate
	if b.Tokens > l.Burst {
		b.Tokens = l.Burst
	}
	b.Last = ms
	if b.Tokens < 1 {
		l.store.Put(key, b)
		if l.Rate <= 0 {
			return false, time.Hour
		}
		return false, time.Duration((1 - b.Tokens) / l.Rate * float64(time.Second))
	}
	b.Tokens--
	l.store.Put(key, b)
	return true, 0
}

// MemoryStore is a Store in Go memory for servers that live between requests
// (servelab serve, tests). It holds at most Max keys, forgetting the least
// recently used one when full (in O(1)), so a flood of addresses cannot grow it.
type MemoryStore struct {
	Max int
	mu  sync.Mutex
	m   map[string]*list.Element // values are *memEntry
	lru list.List                // front: most recently used
}

type memEntry struct {
	key string
	b   Bucket
}

// NewMemoryStore makes a MemoryStore of at most max keys.
func NewMemoryStore(max int) *MemoryStore {
	return &MemoryStore{Max: max, m: map[string]*list.Element{}}
}

// Get returns key's bucket, if it is still remembered.
func (s *MemoryStore) Get(key string) (Bucket, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.m[key]
	if !ok {
		return Bucket{}, false
	}
	s.lru.MoveToFront(el)
	return el.Value.(*memEntry).b, true
}

// Put stores key's bucket.
func (s *MemoryStore) Put(key string, b Bucket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.m[key]; ok {
		el.Value.(*memEntry).b = b
		s.lru.MoveToFront(el)
		return
	}
	if s.Max > 0 && len(s.m) >= s.Max {
		oldest := s.lru.Back()
		delete(s.m, oldest.Value.(*memEntry).key)
		s.lru.Remove(oldest)
	}
	s.m[key] = s.lru.PushFront(&memEntry{key: key, b: b})
}

// Len says how many keys are remembered.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// AddrKey turns a client address (with or without a port) into a rate-limit
// key. IPv6 addresses are keyed by their /64, since one client usually holds a
// whole /64 and could otherwise pick a fresh address per request.
func AddrKey(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return "unknown"
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// RemoteAddrKey keys a request by its TCP peer, for servers that face
// clients directly.
func RemoteAddrKey(r *http.Request) string { return AddrKey(r.RemoteAddr) }

// HeaderKey keys requests by an address header that a trusted front end sets
// (Cloudflare sets CF-Connecting-IP and overwrites any a client sends).
// Requests without it share the key "unknown", so they are limited together.
func HeaderKey(name string) func(*http.Request) string {
	return func(r *http.Request) string {
		v := r.Header.Get(name)
		if v == "" {
			return "unknown"
		}
		return AddrKey(v)
	}
}
