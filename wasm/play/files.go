//go:build js && wasm

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

// Models and a trace uploaded in the page: they live as long as the tab
// (a link to them names them, and says so when they are missing).
var (
	userModels []modelspecs.Model
	userTrace  struct {
		name string
		reqs []sim.Request
	}
)

// filesGen counts uploads of models and traces: a run simulated before one
// may differ from the same settings simulated after it.
var filesGen int

// FilesGen is how many models and traces were uploaded so far.
func FilesGen() int { return filesGen }

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
func AddModel(fileName string, data []byte) (string, error) {
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
	filesGen++
	for i := range userModels {
		if userModels[i].Name == m.Name {
			userModels[i] = m
			return m.Name, nil
		}
	}
	userModels = append(userModels, m)
	return m.Name, nil
}

// ModelNames is the model picker: the catalogue, then uploaded models.
func ModelNames() []string {
	names := modelspecs.Names()
	for _, m := range userModels {
		names = append(names, m.Name)
	}
	return names
}

// model finds a model by name among the catalogue and the uploads.
func model(name string) (modelspecs.Model, error) {
	for _, m := range userModels {
		if m.Name == name {
			return m, nil
		}
	}
	m, err := modelspecs.Get(name)
	if err != nil && strings.Contains(name, "(uploaded)") {
		return m, fmt.Errorf("model %q was uploaded in another page: upload its config.json again", name)
	}
	return m, err
}

// IsTrace reports whether a file should be read as a request trace: a
// CSV, or JSON Lines whose first line has an arrival time and lengths.
func IsTrace(name string, data []byte) bool {
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".csv") {
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
func SetTrace(name string, data []byte) (int, error) {
	reqs, err := results.ReadTrace(name, data, 0, nil)
	if err != nil {
		return 0, err
	}
	if len(reqs) == 0 {
		return 0, fmt.Errorf("%s holds no requests", name)
	}
	return UseTrace(name, reqs), nil
}

// UseTrace makes reqs, read from the file name, the page's "trace"
// workload; it returns how many requests it holds.
func UseTrace(name string, reqs []sim.Request) int {
	userTrace.name, userTrace.reqs = name, reqs
	filesGen++
	return len(reqs)
}

// TraceName is the uploaded trace's file name ("" if none).
func TraceName() string { return userTrace.name }

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
