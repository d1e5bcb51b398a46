package labclient

import (
	"net"
	"testing"
	"time"
)

// A frame that waited in the socket is stamped when it arrived, not when it
// was read (as long as it was read before the next frame on the same
// connection arrived; frames the kernel merged share a later stamp).
func TestKernelTimestampsAreArrivalTimes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sent := make(chan time.Time, 2)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.Read(make([]byte, 1)); err != nil { // as a server, answer only once asked
			return
		}
		for _, f := range []string{"data: one\n\n", "data: two\n\n"} {
			sent <- time.Now()
			c.Write([]byte(f))
			time.Sleep(50 * time.Millisecond)
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := withKernelTimestamps(raw)
	defer c.Close()
	kc, ok := c.(*kernelConn)
	if !ok {
		t.Fatal("SO_TIMESTAMPNS not available on this Linux TCP socket")
	}
	// The kernel turns receive timestamping on for the whole stack
	// asynchronously (a deferred static key) when the first socket asks: on a
	// machine where none had, packets in the next moments carry none.
	time.Sleep(100 * time.Millisecond)
	if _, err := c.Write([]byte("?")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	var got, sentAts []time.Time
	for i := 0; i < 2; i++ {
		sentAt := <-sent
		sentAts = append(sentAts, sentAt)
		time.Sleep(20 * time.Millisecond) // the reader is late
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		at, ok := kc.arrival(now)
		if !ok {
			t.Fatal("no kernel timestamp on the read")
		}
		if late := at.Sub(sentAt); late < 0 || late > 5*time.Millisecond || now.Sub(at) < 15*time.Millisecond {
			t.Errorf("frame %d: stamped %v after sending, read %v after the stamp", i, late, now.Sub(at))
		}
		got = append(got, at)
	}
	// Against the sender's own clock: its sleep may overshoot on a loaded machine.
	sentGap := sentAts[1].Sub(sentAts[0])
	if gap := got[1].Sub(got[0]); gap < sentGap-5*time.Millisecond || gap > sentGap+5*time.Millisecond {
		t.Errorf("gap between arrivals %v, sent %v apart", gap, sentGap)
	}
}
