package results

// Reading a large benchmark file in slices (ReadSliced): the page has
// one thread, and json.Unmarshal of a 50 MB file holds it for seconds. The
// file is read value by value with a json.Decoder; its large lists (the
// per-request arrays, GuideLLM's and GenAI-Perf's requests) one entry at a
// time, calling the caller's Tick in between. What is read is then given
// to the same code as Read's, so the runs (and the errors) are the
// same.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"servelab/sim"
	"servelab/sim/internal/jsonread"
)

// Tick is called by the sliced readers every few tens of kilobytes read
// (or values sorted), with the fraction of the work done (0 to 1); an
// error stops the work and is returned as it is. sim does nothing in it:
// the page lets the browser draw a frame there.
type Tick func(done float64) error

// tickUnits is how much work (about a byte of JSON each) goes between two calls of a Tick.
const tickUnits = 64 << 10

// ticker gathers units of work and calls its Tick once enough has gathered.
type ticker struct {
	f     Tick
	units int
	lo    float64 // the phase's share of the work: from lo,
	span  float64 // span wide (0: all of it)
	shown float64 // the fraction told last (it never goes back)
}

func (t *ticker) add(n int, done float64) error {
	if t == nil || t.f == nil {
		return nil
	}
	t.units += n
	if t.units < tickUnits {
		return nil
	}
	t.units = 0
	if t.span > 0 {
		done = t.lo + t.span*done
	}
	t.shown = min(1, max(t.shown, done))
	return t.f(t.shown)
}

// sortTick sorts xs stably (a bottom-up merge sort), ticking as it goes.
func sortTick[T any](xs []T, cmp func(a, b T) int, tk *ticker, at float64) error {
	n := len(xs)
	const run = 16
	for lo := 0; lo < n; lo += run {
		hi := min(n, lo+run)
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && cmp(xs[j], xs[j-1]) < 0; j-- {
				xs[j], xs[j-1] = xs[j-1], xs[j]
			}
		}
		if err := tk.add(hi-lo, at); err != nil {
			return err
		}
	}
	if n <= run {
		return nil
	}
	buf := make([]T, n)
	src, dst := xs, buf
	const step = 1 << 14 // values merged between two counts of the work
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(n, lo+width), min(n, lo+2*width)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				// Merge up to step values, then count them.
				k0 := k
				for end := min(hi, k+step); k < end && i < mid && j < hi; k++ {
					if cmp(src[j], src[i]) < 0 {
						dst[k] = src[j]
						j++
					} else {
						dst[k] = src[i]
						i++
					}
				}
				if err := tk.add((k-k0)/4+1, at); err != nil {
					return err
				}
			}
			// What is left of either side, a slice at a time.
			for _, rest := range [][]T{src[i:mid], src[j:hi]} {
				for len(rest) > 0 {
					c := copy(dst[k:], rest[:min(len(rest), step)])
					k, rest = k+c, rest[c:]
					if err := tk.add(c/8, at); err != nil {
						return err
					}
				}
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		for k := 0; k < n; k += step {
			copy(xs[k:min(n, k+step)], src[k:])
			if err := tk.add(step/8, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// preValue is a key's value read already (in slices), or the error
// reading it gave.
type preValue struct {
	v   any
	err error
}

// preRead is what the sliced reader read already of an object: the values
// of some keys, and the ticker the readers' long loops tell (nil: none).
type preRead struct {
	vals map[string]preValue
	tk   *ticker
}

// Sliced is what ReadSliced read from a file, and what the page
// needs to word an error as it does for a small file.
type Sliced struct {
	Runs []*Run
	// VLLM is ReadVLLM of the same file for a vLLM run (nil where it refuses it).
	VLLM *VLLM
	// NotObject is json.Unmarshal's error reading the file (BOM trimmed,
	// Python's literals left) as one JSON object; nil when it is one.
	NotObject error
	// Known is IsBench of the file.
	Known bool
	// Format is the row of Formats that detected the file (nil: none did).
	Format *Format
}

// bigLine is the length from which a line of JSON Lines is read in slices.
const bigLine = 256 << 10

// skimMax is the size up to which a value of no interest is kept whole.
const skimMax = 1 << 20

// ReadSliced is Read for a large file, read in slices: tick is
// called every few tens of kilobytes with the fraction read, and an error
// from it stops the reading. Its runs and its error are Read's for
// the same file (the tests compare them).
func ReadSliced(name string, data []byte, tick Tick) (*Sliced, error) {
	return readSliced(name, data, tick, 0)
}

func readSliced(name string, data []byte, tick Tick, chunk int) (*Sliced, error) {
	tk := &ticker{f: tick}
	res := &Sliced{}
	if len(data) > jsonread.MaxBytes {
		return res, sim.Refuse("bench.err.size", "%s: larger than %d bytes", name, jsonread.MaxBytes)
	}
	data = bytes.TrimPrefix(data, jsonread.BOM)
	tk.span = 0.1
	d, rewrote, err := pyJSON(data, tk)
	if err != nil {
		return res, err
	}
	tk.lo, tk.span = 0.1, 0.9
	firstLit := -1
	if rewrote {
		firstLit = firstLiteral(data, d)
	}
	sr := &sliceRead{name: name, d: d, tk: tk, res: res, firstLit: firstLit, orig: data, chunk: chunk}
	i := skipWS(d, 0)
	var runs []*Run
	switch {
	case i < len(d) && d[i] == '{':
		runs, err = sr.objectFile(i)
	case i < len(d) && d[i] == '[':
		runs, err = sr.listFile()
	default:
		// Neither an object nor a list: the whole readers fail at once and say why.
		var probe map[string]json.RawMessage
		res.NotObject = json.Unmarshal(data, &probe)
		f, derr := Detect(data)
		res.Format, res.Known = f, derr == nil
		runs, err = Read(name, data)
		return sr.done(runs, err)
	}
	if err != nil {
		return res, err
	}
	return sr.done(runs, nil)
}

// sliceRead is one file being read by ReadSliced.
type sliceRead struct {
	name     string
	d        []byte // the file, Python's literals rewritten
	orig     []byte // the file as it came (BOM trimmed)
	firstLit int    // where the first Python literal was, -1: none
	tk       *ticker
	res      *Sliced
	chunk    int // bytes the decoder is given at a time (0: all)
}

func (sr *sliceRead) pre(o *jobj) *preRead { return &preRead{vals: o.pre, tk: sr.tk} }

func (sr *sliceRead) done(runs []*Run, err error) (*Sliced, error) {
	if err != nil {
		return sr.res, err
	}
	sr.res.Runs = labelRuns(sr.name, runs)
	return sr.res, nil
}

// notObject sets NotObject: json.Unmarshal's error for the original file,
// where the first Python literal (which it refuses) comes before err.
func (sr *sliceRead) notObject(err error, at int) {
	if sr.firstLit >= 0 && (err == nil || sr.firstLit < at) {
		c := sr.orig[sr.firstLit]
		ctx := "looking for beginning of value"
		if c == '-' {
			c, ctx = 'I', "in numeric literal"
		}
		sr.res.NotObject = errors.New("invalid character " + quoteChar(c) + " " + ctx)
		return
	}
	sr.res.NotObject = err
}

// syntax words the file's first syntax error (err, met by s) as
// json.Unmarshal does, and returns Read's error for such a file. The
// decoder's tokens word errors otherwise, so the file is scanned again
// (in slices) for the message; a file cut short is worded from its last
// value, as json's scanner words its end.
func (sr *sliceRead) syntax(s *slicer, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		i := skipWS(s.d, int(s.dec.InputOffset()))
		if i < len(s.d) && (s.d[i] == ':' || s.d[i] == ',') {
			i++
		}
		msg := errors.New("unexpected end of JSON input")
		if tail := s.d[i:]; len(tail) < skimMax {
			var v any
			if e := json.Unmarshal(append([]byte("["), tail...), &v); e != nil {
				msg = e
			}
		}
		sr.notObject(msg, len(sr.d))
		return notJSON(sr.d)
	}
	dec := json.NewDecoder(&tickReader{d: sr.d, tk: sr.tk})
	var raw json.RawMessage
	err = dec.Decode(&raw)
	var te tickErr
	if errors.As(err, &te) {
		return te.err
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		sr.notObject(se, int(se.Offset))
	case err == nil: // one value, then more
		at := skipWS(sr.d, int(dec.InputOffset()))
		sr.notObject(errors.New("invalid character "+quoteChar(sr.d[at])+" after top-level value"), at)
	default:
		sr.notObject(jsonSyntax(err), len(sr.d))
	}
	return notJSON(sr.d)
}

// tickReader gives its bytes 64 KB at a time, ticking.
type tickReader struct {
	d   []byte
	off int
	tk  *ticker
}

func (r *tickReader) Read(p []byte) (int, error) {
	if r.off == len(r.d) {
		return 0, io.EOF
	}
	if err := r.tk.add(16<<10, float64(r.off)/float64(len(r.d))); err != nil {
		return 0, tickErr{err}
	}
	k := copy(p[:min(len(p), 64<<10)], r.d[r.off:])
	r.off += k
	return k, nil
}

// objectFile reads a file that starts with an object: one object (vLLM,
// GuideLLM, GenAI-Perf, a summary), or JSON Lines (SGLang, AIPerf).
func (sr *sliceRead) objectFile(start int) ([]*Run, error) {
	s := newSlicer(sr.d, 0, len(sr.d), sr.chunk, sr.tk)
	first, err := s.object(true)
	if err != nil {
		if !isSyntax(err) {
			return nil, err // the tick's
		}
		return nil, sr.syntax(s, err)
	}
	end := int(s.dec.InputOffset())
	rest := skipWS(sr.d, end)
	if rest == len(sr.d) {
		sr.notObject(nil, 0)
		first.lift()
		f, err := detectObject(first.raw)
		sr.res.Format = f
		if err != nil {
			return nil, err
		}
		sr.res.Known = true
		if f.object != nil {
			return f.object(sr, first, start, end)
		}
		return readWhole(f, sr.name, sr.d) // one record, or a tool's summary: small
	}
	sr.notObject(errors.New("invalid character "+quoteChar(sr.d[rest])+" after top-level value"), rest)
	// JSON Lines: the first line must be that object alone.
	lineEnd := bytes.IndexByte(sr.d[end:], '\n')
	if lineEnd < 0 {
		lineEnd = len(sr.d) - end
	}
	if bytes.IndexByte(sr.d[start:end], '\n') >= 0 || len(bytes.TrimSpace(sr.d[end:end+lineEnd])) > 0 {
		return nil, notJSON(sr.d)
	}
	first.lift()
	f, err := detectLines(first.raw)
	sr.res.Format = f
	if err != nil {
		return nil, err
	}
	sr.res.Known = true
	if f.lines == nil {
		return readWhole(f, sr.name, sr.d)
	}
	return sr.lines(f.lines(), first, start)
}

// vllmObject reads a vLLM file in slices: its run, and the file as
// ReadVLLM reads it (where Python's literals did not have to be rewritten).
func vllmObject(sr *sliceRead, first *jobj, start, end int) ([]*Run, error) {
	r, err := vllmRun(first.raw, sr.pre(first))
	if err != nil {
		return nil, err
	}
	if sr.firstLit < 0 {
		sr.res.VLLM, _ = vllmBench(first.raw, sr.pre(first))
	}
	return []*Run{r}, nil
}

// sglangObject reads a one-line SGLang file in slices.
func sglangObject(sr *sliceRead, first *jobj, start, end int) ([]*Run, error) {
	// SGLang's file is JSON Lines: one object over several lines is broken.
	if bytes.IndexByte(sr.d[start:end], '\n') >= 0 {
		return readWhole(sr.res.Format, sr.name, sr.d) // it fails on the first line
	}
	r, err := sglangRun(first.raw, sr.pre(first))
	if err != nil {
		return nil, sim.Refuse("field.line", "line %d: %v", 1+bytes.Count(sr.d[:start], []byte("\n")), err)
	}
	return []*Run{r}, nil
}

// guideObject reads GuideLLM's benchmarks, read in slices.
func guideObject(sr *sliceRead, first *jobj, start, end int) ([]*Run, error) {
	if first.guideErr != nil {
		return nil, jsonread.FieldError(first.guideErr, "benchmarks")
	}
	return guideRuns(first.guide, first.guideErrs)
}

// genaiObject reads GenAI-Perf's experiments, read in slices.
func genaiObject(sr *sliceRead, first *jobj, start, end int) ([]*Run, error) {
	if first.genaiErr != nil {
		return nil, jsonread.FieldError(first.genaiErr, "experiments")
	}
	return genaiRuns(&first.genai)
}

// lines reads JSON Lines with lr as jsonLines does, a line at a time;
// first is the first line's object, read already, which a reader that
// takes objects is given as it is (and long lines, read in slices).
func (sr *sliceRead) lines(lr lineReader, first *jobj, firstAt int) ([]*Run, error) {
	ol, objects := lr.(objectLiner)
	d := sr.d
	for n, off := 1, 0; off <= len(d); n++ {
		e := bytes.IndexByte(d[off:], '\n')
		if e < 0 {
			e = len(d) - off
		}
		raw := d[off : off+e]
		lo := off
		off += e + 1
		if err := sr.tk.add(len(raw)+1, float64(lo)/float64(len(d))); err != nil {
			return nil, err
		}
		if raw = bytes.TrimSpace(raw); len(raw) == 0 {
			continue
		}
		var err error
		at := lo + bytes.Index(d[lo:off-1], raw[:1]) // where the trimmed line starts
		switch {
		case objects && at == firstAt:
			err = ol.object(first.raw, sr.pre(first))
		case objects && len(raw) >= bigLine:
			err = sr.bigLine(lr, ol, raw, at)
		default:
			err = lr.line(raw)
		}
		if err != nil {
			if isTick(err) {
				return nil, err
			}
			return nil, sim.Refuse("field.line", "line %d: %v", n, err)
		}
	}
	return lr.finish()
}

// tickErr marks an error that came from the caller's Tick, so that it is
// not dressed as the file's.
type tickErr struct{ err error }

func (e tickErr) Error() string { return e.err.Error() }
func (e tickErr) Unwrap() error { return e.err }

func isTick(err error) bool {
	var t tickErr
	return errors.As(err, &t)
}

// bigLine reads one long line of JSON Lines in slices and gives it to ol
// as an object (to lr whole when it is not an object).
func (sr *sliceRead) bigLine(lr lineReader, ol objectLiner, raw []byte, at int) error {
	s := newSlicer(raw, at, len(sr.d), sr.chunk, sr.tk)
	if raw[0] != '{' {
		return lr.line(raw) // not an object: it says so at once
	}
	o, err := s.object(false)
	if err != nil {
		if isSyntax(err) {
			return errNotObject
		}
		return tickErr{err}
	}
	if skipWS(raw, int(s.dec.InputOffset())) != len(raw) {
		return errNotObject
	}
	o.lift()
	return ol.object(o.raw, sr.pre(o))
}

// listFile reads a file that starts with a list: llmperf's responses.
func (sr *sliceRead) listFile() ([]*Run, error) {
	s := newSlicer(sr.d, 0, len(sr.d), sr.chunk, sr.tk)
	var probe map[string]json.RawMessage
	arrErr := json.Unmarshal([]byte("[]"), &probe) // what json says of a list read as an object
	var first map[string]json.RawMessage
	var lr lineReader // the entries' reader, once the first tells the format
	n, objects := 0, true
	syntax := func(err error) ([]*Run, error) {
		if !isSyntax(err) {
			return nil, err
		}
		return nil, sr.syntax(s, err)
	}
	if _, err := s.dec.Token(); err != nil {
		return syntax(err)
	}
	for s.dec.More() {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return syntax(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			objects = false
		} else if n == 0 {
			first = m
			if f, ok, _ := find(List, m); ok && f.list != nil {
				lr = f.list()
			}
		}
		if lr != nil {
			if err := lr.line(raw); err != nil {
				return nil, err
			}
		}
		n++
		if err := s.tick(); err != nil {
			return nil, err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return syntax(err)
	}
	if rest := skipWS(sr.d, int(s.dec.InputOffset())); rest != len(sr.d) {
		sr.notObject(errors.New("invalid character "+quoteChar(sr.d[rest])+" after top-level value"), rest)
		return nil, notJSON(sr.d)
	}
	sr.notObject(arrErr, len(sr.d))
	if !objects {
		return nil, notJSON(sr.d) // the list is not one of objects, nor is its first line an object
	}
	f, err := detectList(n, []map[string]json.RawMessage{first})
	sr.res.Format = f
	if err != nil {
		return nil, err
	}
	sr.res.Known = true
	if lr == nil {
		return readWhole(f, sr.name, sr.d)
	}
	return lr.finish()
}

// slicer reads one JSON text value by value, ticking.
type slicer struct {
	d     []byte
	dec   *json.Decoder
	tk    *ticker
	base  int // where d starts in the file
	total int // the file's length
	last  int64
}

// newSlicer reads d, which starts at base in a file of total bytes; with
// chunk above 0 the decoder is given chunk bytes at a time (the tests
// split the input everywhere with it).
func newSlicer(d []byte, base, total, chunk int, tk *ticker) *slicer {
	var r io.Reader = bytes.NewReader(d)
	if chunk > 0 {
		r = &chunkReader{d: d, n: chunk}
	}
	return &slicer{d: d, dec: json.NewDecoder(r), tk: tk, base: base, total: total}
}

// chunkReader gives its bytes n at a time.
type chunkReader struct {
	d []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.d) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.d)
	c.d = c.d[k:]
	return k, nil
}

func (s *slicer) tick() error {
	off := s.dec.InputOffset()
	n := int(off - s.last)
	s.last = off
	return s.tk.add(n, float64(s.base+int(off))/float64(max(1, s.total)))
}

// peek is the first byte of the next value.
func (s *slicer) peek() byte {
	i := skipWS(s.d, int(s.dec.InputOffset()))
	if i < len(s.d) && (s.d[i] == ':' || s.d[i] == ',') {
		i = skipWS(s.d, i+1)
	}
	if i < len(s.d) {
		return s.d[i]
	}
	return 0
}

// jobj is an object read in slices: its keys' values (small ones whole,
// read ones standing as placeholders), the per-request arrays read, and
// GuideLLM's benchmarks or GenAI-Perf's experiments when it has them.
type jobj struct {
	raw       map[string]json.RawMessage
	pre       map[string]preValue
	details   *jobj
	guide     []guideBench
	guideErrs []error
	guideErr  error // benchmarks is not a list
	genai     genaiDoc
	genaiErr  error
}

// perRequestKeys are the per-request arrays of vLLM and SGLang, read in slices.
var perRequestKeys = map[string]func(s *slicer) (any, error, error){
	"input_lens":  func(s *slicer) (any, error, error) { return sliceList[int](s, "") },
	"output_lens": func(s *slicer) (any, error, error) { return sliceList[int](s, "") },
	"ttfts":       func(s *slicer) (any, error, error) { return sliceList[float64](s, "") },
	"e2els":       func(s *slicer) (any, error, error) { return sliceList[float64](s, "") },
	"latencies":   func(s *slicer) (any, error, error) { return sliceList[float64](s, "") },
	"start_times": func(s *slicer) (any, error, error) { return sliceList[float64](s, "") },
	"itls":        func(s *slicer) (any, error, error) { return sliceList[[]float64](s, "") },
	"errors":      func(s *slicer) (any, error, error) { return sliceList[string](s, "") },
}

// object reads the object that follows; top: the file's own (where
// GuideLLM's and GenAI-Perf's lists are).
func (s *slicer) object(top bool) (*jobj, error) {
	o := &jobj{raw: map[string]json.RawMessage{}, pre: map[string]preValue{}}
	if _, err := s.dec.Token(); err != nil {
		return nil, err
	}
	for s.dec.More() {
		t, err := s.dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		delete(o.pre, key)
		c := s.peek()
		switch read, ok := perRequestKeys[key]; {
		case ok && c == '[':
			v, typeErr, err := read(s)
			if err != nil {
				return nil, err
			}
			o.raw[key], o.pre[key] = json.RawMessage("[]"), preValue{v, typeErr}
			continue
		case key == "details" && c == '{':
			d, err := s.object(false)
			if err != nil {
				return nil, err
			}
			o.raw[key], o.details = json.RawMessage("{}"), d
			continue
		case top && strings.EqualFold(key, "benchmarks"):
			if err := s.benchmarks(o, key); err != nil {
				return nil, err
			}
			continue
		case top && strings.EqualFold(key, "experiments"):
			if err := s.experiments(o, key); err != nil {
				return nil, err
			}
			continue
		}
		if key == "details" {
			o.details = nil
		}
		raw, err := s.skim()
		if err != nil {
			return nil, err
		}
		o.raw[key] = raw
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, err
	}
	return o, s.tick()
}

// lift is liftDetails: the per-request arrays some SGLang versions nest
// under "details" move up beside the summary.
func (o *jobj) lift() {
	d := o.details
	if d == nil {
		return
	}
	if _, ok := d.raw["itls"]; !ok {
		return
	}
	for k, v := range d.raw {
		if _, taken := o.raw[k]; !taken {
			o.raw[k] = v
			if p, ok := d.pre[k]; ok {
				o.pre[k] = p
			}
		}
	}
}

// benchmarks reads GuideLLM's list of benchmarks, their requests in slices.
func (s *slicer) benchmarks(o *jobj, key string) error {
	o.guide, o.guideErrs, o.guideErr = nil, nil, nil
	if s.peek() != '[' {
		raw, err := s.skim()
		if err != nil {
			return err
		}
		o.raw[key] = raw
		var doc struct {
			Benchmarks []json.RawMessage `json:"benchmarks"`
		}
		if err := json.Unmarshal(wrap("benchmarks", raw), &doc); err != nil {
			o.guideErr = err
			return nil
		}
		for _, b := range doc.Benchmarks {
			var g guideBench
			o.guide, o.guideErrs = append(o.guide, g), append(o.guideErrs, json.Unmarshal(b, &o.guide[len(o.guide)-1]))
		}
		return nil
	}
	o.raw[key] = json.RawMessage("[]")
	if _, err := s.dec.Token(); err != nil {
		return err
	}
	for s.dec.More() {
		var g guideBench
		var gerr error
		if s.peek() != '{' {
			raw, err := s.skim()
			if err != nil {
				return err
			}
			gerr = json.Unmarshal(raw, &g)
		} else if err := s.structFields(&g, &gerr, "", func(k string) (bool, error) {
			if !strings.EqualFold(k, "requests") || s.peek() != '{' {
				return false, nil
			}
			return true, s.structFields(&g.Requests, &gerr, "requests", func(k string) (bool, error) {
				var dst *[]guideReq
				field := ""
				switch {
				case strings.EqualFold(k, "successful"):
					dst, field = &g.Requests.Successful, "requests.successful"
				case strings.EqualFold(k, "incomplete"):
					dst, field = &g.Requests.Incomplete, "requests.incomplete"
				case strings.EqualFold(k, "errored"):
					dst, field = &g.Requests.Errored, "requests.errored"
				}
				if dst == nil || s.peek() != '[' {
					return false, nil
				}
				v, typeErr, err := sliceList[guideReq](s, field)
				if err != nil {
					return true, err
				}
				*dst = v
				if gerr == nil {
					gerr = typeErr
				}
				return true, nil
			})
		}); err != nil {
			return err
		}
		o.guide, o.guideErrs = append(o.guide, g), append(o.guideErrs, gerr)
	}
	_, err := s.dec.Token()
	return err
}

// experiments reads GenAI-Perf's list of experiments, their requests in slices.
func (s *slicer) experiments(o *jobj, key string) error {
	o.genai, o.genaiErr = genaiDoc{}, nil
	if s.peek() != '[' {
		raw, err := s.skim()
		if err != nil {
			return err
		}
		o.raw[key] = raw
		o.genaiErr = json.Unmarshal(wrap("experiments", raw), &o.genai)
		return nil
	}
	o.raw[key] = json.RawMessage("[]")
	if _, err := s.dec.Token(); err != nil {
		return err
	}
	first := func(err error) {
		if o.genaiErr == nil && err != nil {
			o.genaiErr = prefixField(err, "experiments")
		}
	}
	for s.dec.More() {
		var ex genaiExp
		if s.peek() != '{' {
			raw, err := s.skim()
			if err != nil {
				return err
			}
			first(json.Unmarshal(raw, &ex))
		} else {
			var exErr error
			if err := s.structFields(&ex, &exErr, "", func(k string) (bool, error) {
				if !strings.EqualFold(k, "requests") || s.peek() != '[' {
					return false, nil
				}
				v, typeErr, err := sliceList[genaiReq](s, "requests")
				if err != nil {
					return true, err
				}
				ex.Requests = v
				if exErr == nil {
					exErr = typeErr
				}
				return true, nil
			}); err != nil {
				return err
			}
			first(exErr)
		}
		o.genai.Experiments = append(o.genai.Experiments, ex)
	}
	_, err := s.dec.Token()
	return err
}

// structFields reads the object that follows into the struct dst, key by
// key as json.Unmarshal would (each key's value decoded into dst in turn,
// so the same fields match), except the keys own reads itself (it says
// so). The first decoding error goes to *first, prefixed with where.
func (s *slicer) structFields(dst any, first *error, where string, own func(key string) (bool, error)) error {
	if _, err := s.dec.Token(); err != nil {
		return err
	}
	for s.dec.More() {
		t, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		done, err := own(key)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		raw, err := s.skim()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(wrap(key, raw), dst); err != nil && *first == nil {
			*first = prefixField(err, where)
		}
	}
	_, err := s.dec.Token()
	return err
}

// wrap is {key: raw}.
func wrap(key string, raw json.RawMessage) []byte {
	k, _ := json.Marshal(key)
	out := make([]byte, 0, len(k)+len(raw)+3)
	out = append(append(append(append(out, '{'), k...), ':'), raw...)
	return append(out, '}')
}

// sliceList reads the list that follows into a []T one entry at a time, as
// json.Unmarshal would into a *[]T: a type error is kept (the first, its
// field prefixed with where) while the rest is read on, so that a later
// syntax error still wins.
func sliceList[T any](s *slicer, where string) (out []T, typeErr, err error) {
	if _, err := s.dec.Token(); err != nil {
		return nil, nil, err
	}
	out = make([]T, 0)
	for s.dec.More() {
		var v T
		if err := s.dec.Decode(&v); err != nil {
			if isSyntax(err) {
				return nil, nil, err
			}
			if typeErr == nil {
				typeErr = prefixField(err, where)
			}
		}
		out = append(out, v)
		if err := s.tick(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, nil, err
	}
	return out, typeErr, nil
}

// skim reads the value that follows: whole when it is small; a large
// list or object is read in slices and stands as an empty one (no reader
// looks into a value it does not know).
func (s *slicer) skim() (json.RawMessage, error) {
	c := s.peek()
	if c != '[' && c != '{' {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return nil, err
		}
		return raw, s.tick()
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, err
	}
	buf := []byte{c}
	big := false
	for n := 0; s.dec.More(); n++ {
		if !big && n > 0 {
			buf = append(buf, ',')
		}
		if c == '{' {
			t, err := s.dec.Token()
			if err != nil {
				return nil, err
			}
			if !big {
				k, _ := json.Marshal(t)
				buf = append(append(buf, k...), ':')
			}
		}
		v, err := s.skim()
		if err != nil {
			return nil, err
		}
		if !big {
			buf = append(buf, v...)
			if len(buf) > skimMax {
				big, buf = true, nil
			}
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, err
	}
	if big {
		if c == '{' {
			return json.RawMessage("{}"), nil
		}
		return json.RawMessage("[]"), nil
	}
	return append(buf, c+2), nil // ] and } follow [ and { by two
}

// isSyntax reports whether err is the JSON text's (not a value's type).
func isSyntax(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// jsonSyntax words a decoder's syntax error as json.Unmarshal does.
func jsonSyntax(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("unexpected end of JSON input")
	}
	return err
}

// prefixField puts where before a type error's field, as the error of the
// whole document's decoding names it.
func prefixField(err error, where string) error {
	var te *json.UnmarshalTypeError
	if where == "" || !errors.As(err, &te) {
		return err
	}
	c := *te
	if c.Field == "" {
		c.Field = where
	} else {
		c.Field = where + "." + c.Field
	}
	return &c
}

func skipWS(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// quoteChar is a byte as encoding/json's errors quote it.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// firstLiteral is where pyJSON rewrote its first literal: the output is
// the input byte for byte up to there.
func firstLiteral(orig, rewritten []byte) int {
	for i := range min(len(orig), len(rewritten)) {
		if orig[i] != rewritten[i] {
			return i
		}
	}
	return -1
}
