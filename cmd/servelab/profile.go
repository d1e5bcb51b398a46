package main

import (
	"flag"
	"fmt"
	"strings"

	"servelab/sim"
)

// loadProfile resolves --profile: a built-in name, or a profile JSON file.
func loadProfile(name string) (*sim.Profile, error) {
	if name == "" {
		name = sim.DefaultProfile
	}
	if isProfileFile(name) {
		data, err := readCapped(name, maxConfigBytes)
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

// isProfileFile reports whether --profile names a file rather than a built-in profile.
func isProfileFile(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".json") || strings.ContainsAny(name, `/\`)
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
