package labclient

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// kernelConn is a TCP connection read with recvmsg so that every read
// carries the kernel's receive timestamp (SO_TIMESTAMPNS) of the newest
// bytes it returned: when they reached this machine, however late this
// process was scheduled to read them.
type kernelConn struct {
	*net.TCPConn
	raw  syscall.RawConn
	oob  []byte
	last atomic.Int64 // arrival of the bytes last read, as Unix nanoseconds; 0 before any
}

// maxRead keeps a read to about one frame, so a frame's time is its own.
const maxRead = 4096

// withKernelTimestamps turns on receive timestamps for c, or returns c unchanged.
func withKernelTimestamps(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	return &kernelConn{TCPConn: tc, raw: raw, oob: make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))}
}

func (c *kernelConn) Read(p []byte) (int, error) {
	if len(p) > maxRead {
		p = p[:maxRead]
	}
	var n, oobn int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob, 0)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if rerr != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", rerr)}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if ts := timestampNS(c.oob[:oobn]); ts > 0 {
		c.last.Store(ts)
	}
	return n, nil
}

// timestampNS finds SCM_TIMESTAMPNS in a control message, in Unix nanoseconds.
func timestampNS(oob []byte) int64 {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			return (*syscall.Timespec)(unsafe.Pointer(&m.Data[0])).Nano()
		}
	}
	return 0
}

// arrival maps the last read's kernel timestamp onto now's monotonic clock:
// now minus the bytes' age. A timestamp from the future or over a second
// old (the wall clock stepped) is not trusted.
func (c *kernelConn) arrival(now time.Time) (time.Time, bool) {
	ts := c.last.Load()
	if ts == 0 {
		return now, false
	}
	age := time.Duration(now.UnixNano() - ts)
	if age < 0 || age > time.Second {
		return now, false
	}
	return now.Add(-age), true
}
