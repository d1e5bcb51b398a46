package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"servelab/sim"
)

// loadProfile resolves --profile: a built-in name, or a profile JSON file.
func loadProfile(name string) (*sim.Profile, error) {
	if name == "" {
		name = sim.DefaultProfile
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") || strings.ContainsAny(name, `/\`) {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
		p, err := sim.ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("--profile %s: %w", name, err)
		}
		return p, nil
	}
	p, err := sim.BuiltinProfile(name)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	return p, nil
}

// flagSet reports whether the flag was typed (not left at its default).
func flagSet(fs *flag.FlagSet, name string) bool {
	if fs == nil {
		return false
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// scaleCPU scales the profile's per-sequence and per-request costs for gpu
// by the ratio of a typed overhead to the profile's own (to zero when the
// typed overhead is zero); own is the profile as loaded, before any typed flag.
func scaleCPU(prof, own *sim.Profile, gpu string, typed float64) (*sim.Profile, error) {
	var ownOverhead float64
	var costs []sim.ResolvedConstant
	for _, c := range own.Resolve(gpu) {
		switch c.Name {
		case "overhead":
			ownOverhead = c.Value
		case "seq_cost", "req_cost":
			costs = append(costs, c)
		}
	}
	var err error
	for _, c := range costs {
		v := 0.0
		if typed > 0 && ownOverhead > 0 {
			v = c.Value * typed / ownOverhead
		} else if typed > 0 {
			v = c.Value
		}
		if prof, err = prof.With(gpu, c.Name, v, fmt.Sprintf("%s x --overhead/profile overhead (%g/%g)", c.Source, typed, ownOverhead)); err != nil {
			return nil, err
		}
	}
	return prof, nil
}
