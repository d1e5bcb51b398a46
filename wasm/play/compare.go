package play

import (
	"net/url"
	"sort"
	"strings"

	"servelab/sim/scenario"
)

// PairPrefix marks run B's settings in the URL: ?cmp=1&b.policy=chunked&b.budget=512.
const PairPrefix = "b."

// sharedKeys are the workload and the view: run B always has A's (two runs
// of the same requests on one clock). Everything else B may change.
var sharedKeys = map[string]bool{"workload": true, "prompt": true, "output": true, "n": true, "seed": true,
	"streams": true, "sin": true, "sout": true, "long": true, "longout": true, "longn": true, "inject": true, "duration": true,
	"batch": true, "ctx": true, "pre": true, "pdist": true, "odist": true,
	"slottft": true, "slotpot": true, "lendist": true, "spread": true, "t0": true, "span": true, "cursor": true, "sel": true}

// Shared reports whether key belongs to the workload or the view, which
// runs A and B share.
func Shared(key string) bool { return sharedKeys[key] }

// Pair is compare mode: run B is run A with some settings changed.
type Pair struct {
	On bool
	B  map[string]string // B's settings that differ from A's, by URL key
}

// StateB is run B's state: A's with B's own settings on top, and the notes
// about values it had to change.
func (p Pair) StateB(a State) (State, []string) {
	b := a.Clone()
	b.Preset = ""
	var notes []string
	keys := make([]string, 0, len(p.B))
	for k := range p.B {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sharedKeys[k] {
			continue
		}
		if n := b.Set(k, p.B[k]); n != "" {
			notes = append(notes, "B: "+n)
		}
	}
	return b, notes
}

// SetB changes one of B's settings; a shared one changes A (the caller's
// job) and is refused here.
func (p *Pair) SetB(a State, key, value string) string {
	if sharedKeys[key] {
		return ""
	}
	if p.B == nil {
		p.B = map[string]string{}
	}
	b := a.Clone()
	if n := b.Set(key, value); n != "" {
		return n
	}
	// Store B's value as the state spells it, and nothing where it equals A's.
	v := b.value(key)
	if v == a.value(key) {
		delete(p.B, key)
	} else {
		p.B[key] = v
	}
	return ""
}

// value is a setting as the URL writes it.
func (s State) value(key string) string {
	if k, ok := scenario.KnobByURL(key); ok {
		return k.URLText(&s.Experiment)
	}
	for _, vk := range viewKeys {
		if vk.key == key {
			return FormatNum(s.viewValue(vk))
		}
	}
	return ""
}

// Query is the pair's part of the URL ("" when compare mode is off).
func (p Pair) Query() string {
	if !p.On {
		return ""
	}
	keys := make([]string, 0, len(p.B))
	for k := range p.B {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("cmp=1")
	for _, k := range keys {
		b.WriteString("&" + PairPrefix + k + "=" + url.QueryEscape(p.B[k]))
	}
	return b.String()
}

// ParsePair reads compare mode from a URL query: a pair preset's B first,
// then cmp=1 and b.KEY=VALUE on top.
func ParsePair(q string) Pair {
	p := Pair{B: map[string]string{}}
	vals, err := url.ParseQuery(strings.TrimPrefix(q, "?"))
	if err != nil {
		return p
	}
	if b, ok := PairPresets[vals.Get("preset")]; ok {
		p.On = true
		for k, v := range b {
			p.B[k] = v
		}
	}
	if QueryFlag(q, "cmp") {
		p.On = true
	}
	for k := range vals {
		if strings.HasPrefix(k, PairPrefix) {
			p.On = true
			p.B[strings.TrimPrefix(k, PairPrefix)] = vals.Get(k)
		}
	}
	return p
}

// PairPresets are run B's settings of the presets that compare two runs.
var PairPresets = map[string]map[string]string{
	// Prefill-first vs chunked 512 on the same Poisson workload.
	"compare-chunking": {"policy": "chunked", "budget": "512", "bdec": "1"},
	// One colocated GPU with a third of the load vs 2P+1D with all of it:
	// the same load per GPU.
	"compare-disagg": {"policy": "disaggregated", "xp": "2", "yd": "1", "rate": "30"},
}

// TakeOverlay makes run B the simulation of a second measured run o, so
// that each pane pairs its own simulation with its own measurement: B's
// settings become what o's file states (its lab config; the scheduler its
// label names). The workload is the pair's shared one, A's: where o's
// differs, a note says so rather than quietly simulating other requests.
func (p *Pair) TakeOverlay(a State, o *Overlay) []string {
	b := a.Clone()
	notes := o.ApplyConfig(&b)
	if pol, budget := o.Suggests(); pol != "" {
		if n := b.Set("policy", pol); n != "" {
			notes = append(notes, n)
		}
		if budget > 0 {
			if n := b.SetNum("budget", float64(budget)); n != "" {
				notes = append(notes, n)
			}
		}
	}
	p.On = true
	if p.B == nil {
		p.B = map[string]string{}
	}
	for i := range scenario.Knobs {
		k := scenario.Knobs[i].URL
		if k == "" {
			continue
		}
		va, vb := a.value(k), b.value(k)
		switch {
		case va == vb:
			delete(p.B, k)
		case sharedKeys[k]:
			notes = append(notes, Tf(a.Lang, "cmp.sharedkey", o.Name, k, vb, va))
		default:
			p.B[k] = vb
		}
	}
	return notes
}
