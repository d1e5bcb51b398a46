package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// table prints rows under headers, right-aligned, like the lab script's grid.
func table(w io.Writer, headers []string, rows [][]string) { grid(w, "  ", false, headers, rows) }

// grid prints rows under a header and a rule of dashes with text/tabwriter:
// every line starts with indent, columns are two spaces apart and
// right-aligned, but for the first when leftFirst.
func grid(w io.Writer, indent string, leftFirst bool, head []string, rows [][]string) {
	all := append([][]string{head, nil}, rows...)
	first := 0
	for _, r := range all {
		if len(r) > 0 {
			first = max(first, utf8.RuneCountInString(r[0]))
		}
	}
	rule := make([]string, len(head))
	for i := range rule {
		for _, r := range all {
			if i < len(r) {
				rule[i] = strings.Repeat("-", max(len(rule[i]), utf8.RuneCountInString(r[i])))
			}
		}
	}
	all[1] = rule
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	for _, r := range all {
		var b strings.Builder
		for i, c := range r {
			switch {
			case i == 0 && leftFirst:
				b.WriteString(indent + c + strings.Repeat(" ", first-utf8.RuneCountInString(c)))
			case i == 0:
				b.WriteString(indent + c)
			default:
				b.WriteString("  " + c)
			}
			b.WriteByte('\t')
		}
		fmt.Fprintln(tw, b.String())
	}
	tw.Flush()
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
