package play

import (
	"fmt"
	"strconv"

	"servelab/sim/lecture"
)

// Table is a chapter's table as text, in one language: its caption, the
// column heads and the rows (each row's first cell heads it). The page's
// chapter panel and the static page (cmd/sitegen) both write it as HTML.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// Demo1Table returns demo 1's table in lang for batch decodes at context
// ctx each: per prompt length, the decode step alone and with the prompt
// (ms), how much slower each becomes, the prefill alone (ms) and what
// bounds the mixed step. Its last head is the glossary term "bound".
func Demo1Table(lang string, batch, ctx int, rows []lecture.Demo1Row) Table {
	t := Table{
		Caption: Tf(lang, "t1.caption", batch, ctx),
		Head: []string{T(lang, "t1.prompt"), T(lang, "t1.dec"), T(lang, "t1.mixed"), T(lang, "t1.decslow"),
			T(lang, "t1.pre"), T(lang, "t1.preslow"), T(lang, "term.bound")},
	}
	for _, d := range rows {
		t.Rows = append(t.Rows, []string{strconv.Itoa(d.Prompt), ms(d.DecodeOnly), ms(d.Mixed), times(d.DecodeSlowdown),
			ms(d.PrefillOnly), times(d.PrefillSlowdown), T(lang, "bound."+string(d.MixedBound))})
	}
	return t
}

// times is a ratio with two decimals and a multiplication sign.
func times(v float64) string { return fmt.Sprintf("%.2f×", v) }
