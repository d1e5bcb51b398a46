package play

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"servelab/modelspecs"
	"servelab/sim"
	"servelab/sim/results"
)

// FilesGen is how many models, profiles and traces were uploaded to the
// session so far: a run simulated before one may differ from the same
// settings simulated after it.
func (ss *Session) FilesGen() int {
	if ss == nil {
		return 0
	}
	return ss.gen
}

// IsHFConfig reports whether data looks like a Hugging Face config.json
// (a model's shape) rather than a measured run.
func IsHFConfig(data []byte) bool {
	var c struct {
		Layers *int `json:"num_hidden_layers"`
		Hidden *int `json:"hidden_size"`
	}
	return json.Unmarshal(data, &c) == nil && c.Layers != nil && c.Hidden != nil
}

// AddModel reads a Hugging Face config.json and adds its model to the
// model picker (replacing one of the same name); it returns the name.
func (ss *Session) AddModel(fileName string, data []byte) (string, error) {
	name := strings.TrimSuffix(strings.TrimSuffix(fileName, ".json"), "config")
	name = strings.Trim(name, "-_. ")
	m, err := modelspecs.FromHFConfig(data, "")
	if err != nil {
		return "", err
	}
	if m.Name == "" || strings.HasPrefix(m.Name, "custom-") {
		if name != "" {
			m.Name = name
		}
	}
	if err := m.Validate(); err != nil {
		return "", fmt.Errorf("%s: %w", fileName, err)
	}
	for _, n := range modelspecs.Names() {
		if strings.EqualFold(n, m.Name) {
			m.Name += " (uploaded)" // the catalogue's own stays as it is
		}
	}
	ss.gen++
	for i := range ss.models {
		if ss.models[i].Name == m.Name {
			ss.models[i] = m
			return m.Name, nil
		}
	}
	ss.models = append(ss.models, m)
	return m.Name, nil
}

// ModelNames is the model picker: the catalogue, then uploaded models.
func (ss *Session) ModelNames() []string {
	names := modelspecs.Names()
	if ss != nil {
		for _, m := range ss.models {
			names = append(names, m.Name)
		}
	}
	return names
}

// IsTrace reports whether a file should be read as a request trace: a
// CSV, a file the format table names a trace (a Mooncake trace, whatever
// its name), or JSON Lines whose first line has an arrival time and lengths.
func IsTrace(name string, data []byte) bool {
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".csv") {
		return true
	}
	if results.TraceByFirstLine(data) { // (its first line only: a 50 MB upload is read in slices later)
		return true
	}
	if !strings.HasSuffix(lower, ".jsonl") {
		return false
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	_, a := m["timestamp"]
	_, b := m["arrival"]
	_, c := m["arrival_time"]
	return a || b || c
}

// SetTrace reads a trace file as the CLI's --trace does and makes it the
// page's "trace" workload; it returns how many requests it holds.
func (ss *Session) SetTrace(name string, data []byte) (int, error) {
	reqs, err := results.ReadTrace(name, data, 0, nil)
	if err != nil {
		return 0, err
	}
	if len(reqs) == 0 {
		return 0, fmt.Errorf("%s holds no requests", name)
	}
	return ss.UseTrace(name, reqs), nil
}

// UseTrace makes reqs, read from the file name, the page's "trace"
// workload; it returns how many requests it holds.
func (ss *Session) UseTrace(name string, reqs []sim.Request) int {
	ss.trace.name, ss.trace.reqs = name, reqs
	ss.gen++
	return len(reqs)
}

// TraceName is the uploaded trace's file name ("" if none).
func (ss *Session) TraceName() string {
	if ss == nil {
		return ""
	}
	return ss.trace.name
}

// labelPolicy reads a scheduler from a run's label or file name, as the
// lab's --label names it ("unchunked", "chunked-512", "prefill-first"...).
var labelBudget = regexp.MustCompile(`(?i)(?:chunk(?:ed)?|budget)[-_ =]?(\d{2,5})`)

// Suggests is the scheduler the file's label or name says it ran with:
// a policy ("" when it says nothing) and a budget (0 when it names none).
func (o *Overlay) Suggests() (policy string, budget int) {
	label := o.Name
	if o.Config != nil && o.Config.Label != "" {
		label = o.Config.Label + " " + o.Name
	}
	l := strings.ToLower(label)
	switch {
	case strings.Contains(l, "unchunk") || strings.Contains(l, "no-chunk") || strings.Contains(l, "nochunk") || strings.Contains(l, "prefill-first"):
		return "prefill-first", 0
	case strings.Contains(l, "chunk"):
		if m := labelBudget.FindStringSubmatch(label); m != nil {
			budget, _ = strconv.Atoi(m[1])
		}
		return "chunked", budget
	}
	return "", 0
}
