package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// RelaySSE copies a server-sent-event stream from body to w one frame at a
// time, flushing after each, so that a client sees every token when the lab
// server sends it, not when a buffer fills. A frame is the lines up to a blank
// line (LF or CRLF); a frame over maxFrame bytes ends the relay with an error.
// Before the first frame it sends an SSE comment, which clients ignore, so
// that the status and headers go out at once even while the first token is
// still being computed (some platforms send headers only on the first write).
func RelaySSE(w http.ResponseWriter, body io.Reader, maxFrame int) error {
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	if _, err := io.WriteString(w, ": servelab proxy\n\n"); err != nil {
		return err
	}
	flush()
	br := bufio.NewReaderSize(body, 32<<10)
	var frame bytes.Buffer
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: keep it and read on.
			frame.Write(line)
			if frame.Len() > maxFrame {
				return fmt.Errorf("an SSE frame over %d bytes", maxFrame)
			}
			continue
		}
		frame.Write(line)
		if frame.Len() > maxFrame {
			return fmt.Errorf("an SSE frame over %d bytes", maxFrame)
		}
		end := err == nil && isBlank(line) || err != nil && frame.Len() > 0
		if end {
			if err != nil && frame.Len() > 0 && !bytes.HasSuffix(frame.Bytes(), []byte("\n")) {
				frame.WriteString("\n\n") // a last frame cut short: close it
			}
			if _, werr := w.Write(frame.Bytes()); werr != nil {
				return werr
			}
			flush()
			frame.Reset()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func isBlank(line []byte) bool {
	return len(bytes.TrimRight(line, "\r\n")) == 0
}
