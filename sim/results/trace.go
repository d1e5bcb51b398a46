package results

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"servelab/sim"
)

// Trace replay: a file of requests, one per line, with an arrival time, a
// prompt length and an output length, read as CSV (with a header naming the
// columns) or as JSON Lines (one object per line). Column and key names are
// matched loosely (case, '_', '-' and spaces are ignored), so the usual
// spellings of published traces work:
//
//	arrival:  arrival, arrival_time, arrival_s, timestamp, time (seconds);
//	          arrival_ms, arrival_time_ms, timestamp_ms (milliseconds)
//	prompt:   prompt, prompt_len, prompt_length, prompt_tokens, input_len, input_length,
//	          input_tokens, context_tokens (Azure's ContextTokens)
//	output:   output, output_len, output_length, output_tokens, generated_tokens, completion_tokens
//	id:       id, request_id (optional; else the record's position in the file, from 0)
//
// Other columns are ignored. Arrivals are seconds (or milliseconds for the
// _ms names, and for "timestamp" in Mooncake's JSONL traces, told by
// isMooncake; ReadTrace's unit sets it outright), or date-times such as
// "2023-11-16 18:15:46.6805900" or RFC 3339, which are taken relative to
// the earliest one. Requests need not be in arrival order: ReadTrace sorts
// them by arrival, keeping file order among equal times. In CSV, lines
// starting with '#' are comments.

// MaxTraceBytes bounds a trace file.
const MaxTraceBytes = 256 << 20

// maxTraceLine bounds one JSON line (traces carry extras such as hash lists).
const maxTraceLine = 4 << 20

// traceField is one thing a trace record carries.
type traceField int

const (
	fArrival traceField = iota
	fPrompt
	fOutput
	fID
	nFields
)

var fieldNames = [nFields]string{"arrival", "prompt", "output", "id"}

// traceColumns are the accepted spellings of each field (matched after
// normalizeColumn) and the seconds per unit of an arrival column.
var traceColumns = []struct {
	f     traceField
	scale float64
	names []string
}{
	{fArrival, 1, []string{"arrival", "arrival_time", "arrival_s", "timestamp", "time"}},
	{fArrival, 1e-3, []string{"arrival_ms", "arrival_time_ms", "timestamp_ms"}},
	{fPrompt, 0, []string{"prompt", "prompt_len", "prompt_length", "prompt_tokens", "input_len", "input_length", "input_tokens", "context_tokens"}},
	{fOutput, 0, []string{"output", "output_len", "output_length", "output_tokens", "generated_tokens", "completion_tokens"}},
	{fID, 0, []string{"id", "request_id"}},
}

// lookupColumn finds the field a column name gives.
func lookupColumn(name string) (f traceField, scale float64, ok bool) {
	n := normalizeColumn(name)
	for _, c := range traceColumns {
		for _, a := range c.names {
			if normalizeColumn(a) == n {
				return c.f, c.scale, true
			}
		}
	}
	return 0, 0, false
}

// aliasesOf lists the spellings accepted for f.
func aliasesOf(f traceField) []string {
	var out []string
	for _, c := range traceColumns {
		if c.f == f {
			out = append(out, c.names...)
		}
	}
	return out
}

func normalizeColumn(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '\t':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// traceReader turns one record's raw values into a request, remembering how
// the arrivals are written so that every line must agree.
type traceReader struct {
	name   string
	cols   [nFields]string // the name each field has in the file
	scale  float64         // seconds per arrival unit
	unit   float64         // > 0: seconds per arrival unit, whatever the column is called
	dates  int             // 0 unknown, 1 numbers, 2 date-times
	hasID  bool
	times  []time.Time // date-time arrivals, converted at the end
	reqs   []sim.Request
	blocks []BlockHashes // each request's hash_ids, where the trace has them (nil: it has none)
	bound  bool          // the JSON Lines' field names are known (from the first object)
	record int
	tk     *ticker // ReadTrace's Tick, told of the bytes read
	size   int     // bytes in the file
	read   int     // bytes read so far
}

func (tr *traceReader) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s line %d: %s", tr.name, line, fmt.Sprintf(format, args...))
}

// bind records which column carries which field.
func (tr *traceReader) bind(names []string, line int, what string) ([nFields]int, error) {
	var idx [nFields]int
	for i := range idx {
		idx[i] = -1
	}
	for i, n := range names {
		f, scale, ok := lookupColumn(n)
		if !ok {
			continue
		}
		if idx[f] >= 0 {
			return idx, tr.errorf(line, "%s %q and %q both give the %s", what, tr.cols[f], n, fieldNames[f])
		}
		idx[f], tr.cols[f] = i, n
		if f == fArrival {
			tr.scale = cmp.Or(tr.unit, scale)
		}
	}
	for f := fArrival; f <= fOutput; f++ {
		if idx[f] < 0 {
			return idx, tr.errorf(line, "no %s %s (have %s; want one of %s)", fieldNames[f], what,
				quoteAll(names), strings.Join(aliasesOf(f), ", "))
		}
	}
	tr.hasID = idx[fID] >= 0
	return idx, nil
}

func quoteAll(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// add checks one record's values (strings as written; present says whether
// the id was given) and appends its request.
func (tr *traceReader) add(line int, vals [nFields]string, present [nFields]bool) error {
	if len(tr.reqs) >= sim.MaxRequests {
		return tr.errorf(line, "more than %d requests", sim.MaxRequests)
	}
	r := sim.Request{ID: tr.record}
	tr.record++
	for f := fArrival; f < nFields; f++ {
		if f == fID && !tr.hasID {
			continue
		}
		v := strings.TrimSpace(vals[f])
		if !present[f] || v == "" {
			return tr.errorf(line, "%s is missing", tr.cols[f])
		}
		switch f {
		case fArrival:
			if err := tr.arrival(line, v, &r); err != nil {
				return err
			}
		default:
			n, err := tr.integer(line, f, v)
			if err != nil {
				return err
			}
			switch f {
			case fPrompt:
				r.Prompt = n
			case fOutput:
				r.Output = n
			case fID:
				r.ID = n
			}
		}
	}
	tr.reqs = append(tr.reqs, r)
	return nil
}

// integer reads a token count or id: an integer, or a float with no fraction ("512.0").
func (tr *traceReader) integer(line int, f traceField, v string) (int, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x != math.Trunc(x) || math.IsInf(x, 0) {
		return 0, tr.errorf(line, "%s %s is not an integer", tr.cols[f], clipQuote(v))
	}
	lo, hi := 1.0, float64(sim.MaxTokens)
	if f == fID {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if x < lo || x > hi {
		return 0, tr.errorf(line, "%s %s is out of range %d..%d", tr.cols[f], v, int64(lo), int64(hi))
	}
	return int(x), nil
}

// Date-time layouts accepted for arrivals.
var traceLayouts = []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999"}

func (tr *traceReader) arrival(line int, v string, r *sim.Request) error {
	x, err := strconv.ParseFloat(v, 64)
	kind := 1
	if err != nil {
		kind = 2
		for _, layout := range traceLayouts {
			var t time.Time
			if t, err = time.Parse(layout, v); err == nil {
				tr.times = append(tr.times, t)
				break
			}
		}
		if err != nil {
			return tr.errorf(line, "%s %s is neither seconds nor a date-time like 2006-01-02 15:04:05.000", tr.cols[fArrival], clipQuote(v))
		}
	}
	if tr.dates != 0 && tr.dates != kind {
		return tr.errorf(line, "%s %s mixes numbers and date-times", tr.cols[fArrival], clipQuote(v))
	}
	tr.dates = kind
	if kind == 1 {
		x *= tr.scale
		// A year is far beyond any trace replay; bigger values are typos or epoch times.
		if !finite(x) || x < 0 || x > maxTraceArrival {
			return tr.errorf(line, "%s %s must be seconds in [0, %g]", tr.cols[fArrival], clipQuote(v), float64(maxTraceArrival))
		}
		r.Arrival = math.Abs(x) // no -0

	}
	return nil
}

// maxTraceArrival bounds numeric arrivals (seconds): a year.
const maxTraceArrival = 366 * 24 * 3600

func clipQuote(v string) string {
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return strconv.Quote(v)
}

// finish converts date-times, sorts by arrival and checks the trace is not empty.
func (tr *traceReader) finish() ([]sim.Request, error) {
	if len(tr.reqs) == 0 {
		return nil, fmt.Errorf("%s: no requests", tr.name)
	}
	if tr.dates == 2 {
		first := slices.MinFunc(tr.times, func(a, b time.Time) int { return a.Compare(b) })
		for i, t := range tr.times {
			d := t.Sub(first).Seconds()
			if d > maxTraceArrival {
				return nil, fmt.Errorf("%s: %s spans more than a year (%s to %s)", tr.name, tr.cols[fArrival], first, t)
			}
			tr.reqs[i].Arrival = d
		}
	}
	// Sort an index (stably), so the hash ids follow their requests.
	order := make([]int, len(tr.reqs))
	for i := range order {
		order[i] = i
	}
	if err := sortTick(order, func(a, b int) int { return cmp.Compare(tr.reqs[a].Arrival, tr.reqs[b].Arrival) }, tr.tk, 0.9); err != nil {
		return nil, err
	}
	reqs := make([]sim.Request, len(order))
	var blocks []BlockHashes
	if tr.blocks != nil {
		blocks = make([]BlockHashes, len(order))
	}
	for i, j := range order {
		reqs[i] = tr.reqs[j]
		if blocks != nil {
			blocks[i] = tr.blocks[j]
		}
	}
	tr.reqs, tr.blocks = reqs, blocks
	return tr.reqs, nil
}

// ReadTrace reads a request trace held in data (CSV with a header, or JSON
// Lines; see the notes above for the accepted names and units) and returns
// its requests sorted by arrival. name labels errors, e.g. "trace.csv line
// 7: output_len "abc" is not an integer". unit is seconds per numeric
// arrival unit (1e-3 for milliseconds), whatever the column is called:
// some traces (Mooncake's) give milliseconds under a plain "timestamp";
// unit 0 goes by the column name, and date-times are not affected. tick,
// when not nil, is called every few tens of kilobytes with the fraction
// read, and an error from it stops the reading; the requests do not
// depend on it.
func ReadTrace(name string, data []byte, unit float64, tick Tick) ([]sim.Request, error) {
	reqs, _, err := ReadTraceBlocks(name, data, unit, tick)
	return reqs, err
}

// ReadTraceBlocks is [ReadTrace] that also returns each request's prefix
// blocks (Mooncake's hash_ids), in the order of the requests it returns;
// the blocks are nil when the trace has no hash_ids.
func ReadTraceBlocks(name string, data []byte, unit float64, tick Tick) ([]sim.Request, []BlockHashes, error) {
	if !(unit >= 0) || math.IsInf(unit, 0) {
		return nil, nil, fmt.Errorf("%s: arrival unit must be 0 (by column name) or a positive number of seconds, got %g", name, unit)
	}
	tk := &ticker{f: tick}
	if len(data) > MaxTraceBytes {
		return nil, nil, fmt.Errorf("%s: larger than %d MiB", name, MaxTraceBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	tr := &traceReader{name: name, unit: unit, tk: tk, size: len(data)}
	var err error
	switch first := bytes.TrimLeft(data, " \t\r\n"); {
	case len(first) == 0:
		return nil, nil, fmt.Errorf("%s: empty trace", name)
	case first[0] == '{':
		err = tr.readJSONL(data)
	case first[0] == '[':
		return nil, nil, fmt.Errorf("%s: a JSON array; write one JSON object per line (JSON Lines) or CSV with a header", name)
	default:
		err = tr.readCSV(data)
	}
	if err != nil {
		return nil, nil, err
	}
	reqs, err := tr.finish()
	if err != nil {
		return nil, nil, err
	}
	for i := range reqs { // the engine's prefix cache reads the blocks from the requests
		if i < len(tr.blocks) && len(tr.blocks[i]) > 0 {
			reqs[i].Blocks, reqs[i].BlockTokens = tr.blocks[i].Names(), MooncakeBlockTokens
		}
	}
	return reqs, tr.blocks, nil
}

func (tr *traceReader) readCSV(data []byte) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1 // checked here, with a clearer message
	cr.ReuseRecord = true
	var idx [nFields]int
	header := true
	width := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return tr.errorf(pe.Line, "%v", pe.Err)
			}
			return fmt.Errorf("%s: %w", tr.name, err)
		}
		line, _ := cr.FieldPos(0)
		if err := tr.tk.add(int(cr.InputOffset())-tr.read, 0.9*float64(cr.InputOffset())/float64(max(1, tr.size))); err != nil {
			return err
		}
		tr.read = int(cr.InputOffset())
		if header {
			if allNumbers(rec) {
				return tr.errorf(line, "no header: the first line must name the columns, e.g. arrival,prompt_len,output_len")
			}
			if idx, err = tr.bind(rec, line, "column"); err != nil {
				return err
			}
			header, width = false, len(rec)
			continue
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a line of blanks
		}
		if len(rec) != width {
			return tr.errorf(line, "%d fields, but the header has %d", len(rec), width)
		}
		var vals [nFields]string
		var present [nFields]bool
		for f, i := range idx {
			if i >= 0 {
				vals[f], present[f] = rec[i], true
			}
		}
		if err := tr.add(line, vals, present); err != nil {
			return err
		}
	}
	if header {
		return fmt.Errorf("%s: no header and no requests", tr.name)
	}
	return nil
}

func allNumbers(rec []string) bool {
	for _, v := range rec {
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return false
		}
	}
	return true
}

func (tr *traceReader) readJSONL(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	line := 0
	for sc.Scan() {
		line++
		tr.read += len(sc.Bytes()) + 1
		if err := tr.tk.add(len(sc.Bytes())+1, 0.9*float64(tr.read)/float64(max(1, tr.size))); err != nil {
			return err
		}
		if err := tr.jsonLine(line, sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return tr.errorf(line+1, "longer than %d MiB", maxTraceLine>>20)
		}
		return fmt.Errorf("%s: %w", tr.name, err)
	}
	return nil
}

// jsonLine reads one line of a JSON Lines trace (a blank line is skipped):
// the first object's keys name the fields, and later lines must use the
// same names.
func (tr *traceReader) jsonLine(line int, text []byte) error {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(text, &obj); err != nil {
		return tr.errorf(line, "not a JSON object: %v", err)
	}
	if !tr.bound {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys) // map order is random; errors must not be
		if _, err := tr.bind(keys, line, "key"); err != nil {
			return err
		}
		tr.bound = true
		// Mooncake's traces count a plain "timestamp" in milliseconds.
		if isMooncake(obj) && tr.unit == 0 && normalizeColumn(tr.cols[fArrival]) == normalizeColumn("timestamp") {
			tr.scale = 1e-3
		}
	}
	var vals [nFields]string
	var present [nFields]bool
	for f := range nFields {
		if f == fID && !tr.hasID {
			continue
		}
		raw, ok := obj[tr.cols[f]]
		if !ok {
			continue
		}
		v, err := jsonScalar(raw)
		if err != nil {
			return tr.errorf(line, "%s %s", tr.cols[f], err)
		}
		vals[f], present[f] = v, true
	}
	if err := tr.add(line, vals, present); err != nil {
		return err
	}
	return tr.hashIDs(line, obj["hash_ids"])
}

// hashIDs keeps a record's hash_ids (a list of non-negative integers, or
// absent) beside its request, once any record of the trace has them.
func (tr *traceReader) hashIDs(line int, raw json.RawMessage) error {
	var ids BlockHashes
	if raw != nil && string(raw) != "null" {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return tr.errorf(line, "hash_ids %s is not a list of integers", clipQuote(string(raw)))
		}
		for _, id := range ids {
			if id < 0 {
				return tr.errorf(line, "hash_ids holds %d: block ids are not negative", id)
			}
		}
		if tr.blocks == nil {
			tr.blocks = make([]BlockHashes, len(tr.reqs)-1, cap(tr.reqs))
		}
	}
	if tr.blocks != nil {
		tr.blocks = append(tr.blocks, ids)
	}
	return nil
}

// jsonScalar is a JSON number or string as text (null reads as missing).
func jsonScalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("is an empty string")
		}
		return s, nil
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		return string(raw), nil
	}
	return "", fmt.Errorf("is %s, not a number", clipQuote(string(raw)))
}

// WriteTrace writes requests as a CSV trace that ReadTrace reads back exactly.
func WriteTrace(w io.Writer, reqs []sim.Request) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "id,arrival,prompt_len,output_len")
	for _, r := range reqs {
		fmt.Fprintf(bw, "%d,%s,%d,%d\n", r.ID, strconv.FormatFloat(r.Arrival, 'g', -1, 64), r.Prompt, r.Output)
	}
	return bw.Flush()
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
