package proxy

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestLimiterRefillsAtRate(t *testing.T) {
	l := NewLimiter(30, 2, NewMemoryStore(10)) // one token every 2 s
	t0 := time.Unix(5000, 0)
	for i := 0; i < 2; i++ {
		if ok, _ := l.Allow("a", t0); !ok {
			t.Fatalf("request %d within the burst refused", i)
		}
	}
	ok, wait := l.Allow("a", t0.Add(500*time.Millisecond))
	if ok || wait < 1400*time.Millisecond || wait > 1600*time.Millisecond {
		t.Fatalf("third request: ok=%v wait=%v, want refused with ~1.5s to wait", ok, wait)
	}
	if ok, _ := l.Allow("a", t0.Add(2100*time.Millisecond)); !ok {
		t.Fatal("refused after a token was due")
	}
	if ok, _ := l.Allow("a", t0.Add(2200*time.Millisecond)); ok {
		t.Fatal("allowed with an empty bucket")
	}
	// A long pause refills only up to the burst.
	late := t0.Add(time.Hour)
	for i := 0; i < 2; i++ {
		if ok, _ := l.Allow("a", late); !ok {
			t.Fatalf("after a pause, request %d refused", i)
		}
	}
	if ok, _ := l.Allow("a", late); ok {
		t.Fatal("bucket grew past the burst")
	}
}

func TestMemoryStoreForgetsLeastRecentlyUsed(t *testing.T) {
	s := NewMemoryStore(2)
	s.Put("a", Bucket{Tokens: 1})
	s.Put("b", Bucket{Tokens: 2})
	s.Get("a")
	s.Put("c", Bucket{Tokens: 3})
	if s.Len() != 2 {
		t.Fatalf("len %d", s.Len())
	}
	if _, ok := s.Get("b"); ok {
		t.Error("b should have been forgotten")
	}
	if b, ok := s.Get("a"); !ok || b.Tokens != 1 {
		t.Errorf("a = %v %v", b, ok)
	}
}

func TestAddrKey(t *testing.T) {
	cases := map[string]string{
		"203.0.113.7:5555":           "203.0.113.7",
		"203.0.113.7":                "203.0.113.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":       "2001:db8:1:2::/64",
		"::ffff:198.51.100.1":        "198.51.100.1",
		"":                           "unknown",
		"not an address":             "unknown",
	}
	for in, want := range cases {
		if got := AddrKey(in); got != want {
			t.Errorf("AddrKey(%q) = %q, want %q", in, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("CF-Connecting-IP", "198.51.100.9")
	if got := HeaderKey("CF-Connecting-IP")(r); got != "198.51.100.9" {
		t.Errorf("HeaderKey = %q", got)
	}
}
