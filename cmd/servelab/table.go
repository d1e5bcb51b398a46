package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// table prints rows under headers, right-aligned, like the lab script's grid.
func table(w io.Writer, headers []string, rows [][]string) {
	width := make([]int, len(headers))
	for i, h := range headers {
		width[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = strings.Repeat(" ", width[i]-len([]rune(c))) + c
		}
		fmt.Fprintln(w, "  "+strings.Join(parts, "  "))
	}
	line(headers)
	dashes := make([]string, len(headers))
	for i := range dashes {
		dashes[i] = strings.Repeat("-", width[i])
	}
	line(dashes)
	for _, r := range rows {
		line(r)
	}
}

// ms formats seconds as milliseconds.
func ms(s float64) string { return fmt.Sprintf("%.2f ms", s*1e3) }

// writeJSON prints v indented.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// observe prints numbered observations.
func observe(w io.Writer, lines ...string) {
	fmt.Fprintln(w, "\nObservations:")
	for _, l := range lines {
		fmt.Fprintf(w, "  - %s\n", l)
	}
}
