package companion

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveWith runs h behind HTTPServer(h, t) on a loopback port.
func serveWith(t *testing.T, h http.Handler, to Timeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := HTTPServer(h, to)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// closedWithin reports whether the server closes c within d (a read returns EOF or a reset).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

func TestSlowAndIdleClientsAreDropped(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		fmt.Fprintf(w, "%d", len(b))
	})
	addr := serveWith(t, echo, Timeouts{Header: time.Second, Request: 300 * time.Millisecond, Idle: 300 * time.Millisecond})

	// A body promised but trickled: cut off at the request timeout.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nab")
	if !closedWithin(slow, 3*time.Second) {
		t.Errorf("a client trickling its body still holds the connection after 3 s (request timeout 300 ms)")
	}

	// A keep-alive connection after one request, then silence: closed at the idle timeout.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab")
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "2" {
		t.Fatalf("echo: %d %q", resp.StatusCode, b)
	}
	if !closedWithin(idle, 3*time.Second) {
		t.Errorf("an idle keep-alive connection is still held after 3 s (idle timeout 300 ms)")
	}
}

func TestLongResponseOutlivesRequestTimeout(t *testing.T) {
	// A stream that runs past the request timeout keeps its context and its connection.
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		for i := 0; i < 8; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			fmt.Fprintf(w, "tick %d\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "end\n")
	})
	addr := serveWith(t, stream, Timeouts{Header: time.Second, Request: 200 * time.Millisecond, Idle: time.Second})
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("prompt"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(b), "end\n") {
		t.Fatalf("a 0.8 s stream behind a 200 ms request timeout: %q, %v", b, err)
	}
}
