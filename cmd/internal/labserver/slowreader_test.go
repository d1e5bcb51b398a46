package labserver

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlowReaderCostsOnlyItself: a client that opens a stream and never
// reads it (a suspended run.py) fills its socket buffer; from then on a
// write to it blocks. That must not hold back the frames of the other
// streams, whose gaps are what the lab measures.
func TestSlowReaderCostsOnlyItself(t *testing.T) {
	const (
		cadence = 2 * time.Millisecond
		tokens  = 1500 // 3 s of frames: well past the moment the slow client's buffers fill
		readers = 7
	)
	s, err := New(Config{Cadence: cadence, ModelName: "lab-model"})
	if err != nil {
		t.Fatal(err)
	}
	// Small socket send buffers on the server's side, so that a client that
	// does not read fills them within a second rather than after megabytes.
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() { s.Close(); hs.Close() })
	url := hs.URL
	addr := strings.TrimPrefix(url, "http://")

	// The slow client goes first, so it holds the first slot of the first
	// writer, ahead of every other stream there. Its receive buffer is tiny.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if err := slow.(*net.TCPConn).SetReadBuffer(1024); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"prompt":"x","max_tokens":%d,"stream":true}`, tokens)
	fmt.Fprintf(slow, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	time.Sleep(20 * cadence)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var worstSent, worstSeen time.Duration
	complete := 0
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, fs, err := openStream(t, context.Background(), url, "/v1/completions", body)
			if err != nil {
				t.Error(err)
				return
			}
			var sent, seen time.Duration
			for j := 1; j < len(fs)-1; j++ {
				a, _ := fs[j-1].data["servelab_t"].(float64)
				b, _ := fs[j].data["servelab_t"].(float64)
				sent = max(sent, time.Duration((b-a)*1e9))
				seen = max(seen, fs[j].at.Sub(fs[j-1].at))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(fs) == tokens+1 {
				complete++
			}
			worstSent, worstSeen = max(worstSent, sent), max(worstSeen, seen)
		}()
	}
	wg.Wait()
	t.Logf("the other streams' worst gap: %v sent, %v received (cadence %v); server: %+v", worstSent, worstSeen, cadence, s.Stats(false))
	if complete != readers {
		t.Fatalf("%d of %d reading streams got all %d frames", complete, readers, tokens)
	}
	// The slow client did block: it was dropped before its last frame.
	if st := s.Stats(false); st.Frames >= (readers+1)*tokens {
		t.Fatalf("the client that does not read got all its %d frames: its socket buffers never filled", tokens)
	}
	// A frame held behind the blocked write waits as long as the write does:
	// up to writeWait (2 s), when the client is dropped. Without that, the
	// worst gap is the cadence plus scheduling noise (a few ms; a few hundred
	// on a machine loaded several times over).
	if worstSent > writeWait/2 {
		t.Errorf("with one client not reading, the other streams' worst gap (server send times) is %v, cadence %v", worstSent, cadence)
	}
}

// smallSendBuffers is a listener whose connections have a 4 KiB send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}
