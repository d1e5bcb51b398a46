// Command sitegen writes the parts of the playground's static page that
// come from the catalogues (wasm/play) and the lecture (sim/lecture), so a
// visitor reads the chapter before app.wasm has arrived and the texts keep
// one definition:
//
//   - in site/index.html, the first chapter, where the course starts (its
//     title, question, what is fixed and what moves, the prediction asked
//     and demo 1's table at the chapter's settings) in English, the same in
//     the other languages as a <template>, and a few lines of script that
//     show the language the URL or the browser asks for, or hide the
//     section when the URL asks for another view (the app then takes over
//     the same elements);
//   - in site/index.html and site/canvas.html, the words the page shows
//     before the simulator runs (self.servelabWords: the download's
//     progress, its failures, the controls that wait for it).
//
// Each part sits between <!-- sitegen:NAME --> and <!-- /sitegen:NAME -->.
// Usage: go run ./cmd/sitegen [-site DIR] [-check]; -check only reports
// the files that are not up to date (the package's test does the same).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"servelab/wasm/play"
)

// bootKeys are the catalogue keys the page's scripts show before the app runs.
var bootKeys = []string{"boot.loading", "boot.starting", "boot.noexec", "boot.nowasm", "boot.stopped", "boot.failed", "boot.waiting", "boot.mb"}

// landing is the chapter and language the static page shows as it is.
const landing, landingLang = "demo1", "en"

func main() {
	dir := flag.String("site", "site", "the site's directory")
	check := flag.Bool("check", false, "only report files that are not up to date (exit status 1)")
	flag.Parse()
	stale, err := run(*dir, !*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sitegen:", err)
		os.Exit(1)
	}
	for _, f := range stale {
		if *check {
			fmt.Printf("%s is not up to date: run `go run ./cmd/sitegen`\n", f)
		} else {
			fmt.Printf("sitegen: wrote %s\n", f)
		}
	}
	if *check && len(stale) > 0 {
		os.Exit(1)
	}
}

// run regenerates the files of dir, writing them when write is set, and
// returns the files whose content changed (or would change).
func run(dir string, write bool) ([]string, error) {
	parts, err := Parts()
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, name := range []string{"index.html", "canvas.html"} {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		fresh, err := Fill(old, parts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if bytes.Equal(old, fresh) {
			continue
		}
		changed = append(changed, path)
		if write {
			if err := os.WriteFile(path, fresh, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return changed, nil
}

// Fill returns doc with each of its sitegen regions replaced by the part
// of that name; a region without a part is an error, as is a region not closed.
func Fill(doc []byte, parts map[string]string) ([]byte, error) {
	var out bytes.Buffer
	rest := doc
	for {
		i := bytes.Index(rest, []byte("<!-- sitegen:"))
		if i < 0 {
			out.Write(rest)
			return out.Bytes(), nil
		}
		j := bytes.Index(rest[i:], []byte(" -->"))
		if j < 0 {
			return nil, fmt.Errorf("an unclosed sitegen marker")
		}
		name := string(rest[i+len("<!-- sitegen:") : i+j])
		open := rest[:i+j+len(" -->")]
		end := []byte("<!-- /sitegen:" + name + " -->")
		k := bytes.Index(rest, end)
		if k < 0 {
			return nil, fmt.Errorf("region %q has no %s", name, end)
		}
		part, ok := parts[name]
		if !ok {
			return nil, fmt.Errorf("no part named %q", name)
		}
		out.Write(open)
		out.WriteString("\n" + part + "\n")
		out.Write(end)
		rest = rest[k+len(end):]
	}
}

// Parts returns every region's content by name: "words" (the script
// setting self.servelabWords), "chapter" (the landing chapter, the
// templates and the script picking one) and "boot" (the download's
// progress where the canvas will be).
func Parts() (map[string]string, error) {
	words := map[string]map[string]string{}
	for _, lang := range play.Langs() {
		words[lang] = map[string]string{}
		for _, k := range bootKeys {
			words[lang][k] = play.T(lang, k)
		}
	}
	w, err := json.Marshal(words)
	if err != nil {
		return nil, err
	}
	var ch strings.Builder
	first, err := chapterHTML(landing, landingLang)
	if err != nil {
		return nil, err
	}
	ch.WriteString(`<section id="chapter" aria-labelledby="ch-title" class="static">` + first + `</section>` + "\n")
	// The landing chapter in the other languages. Other chapters are not
	// written: each would add its bytes to every visit from a plain static
	// host (which sends the page uncompressed), and a link to one is rarer.
	for _, lang := range play.Langs() {
		if lang == landingLang {
			continue
		}
		body, err := chapterHTML(landing, lang)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&ch, "<template id=\"sg-%s-%s\">%s</template>\n", landing, lang, body)
	}
	ch.WriteString(pickScript)
	esc := html.EscapeString
	boot := `<div id="boot-progress" role="status"><p><span class="what">` + esc(play.T("en", "boot.loading")) +
		`</span><progress max="1" aria-label="` + esc(strings.TrimSpace(play.T("en", "boot.loading"))) + `"></progress> <span class="mb"></span></p>` +
		`<p class="small waiting">` + esc(play.T("en", "boot.waiting")) + `</p></div>`
	return map[string]string{
		"words":   "<script>self.servelabWords = " + string(w) + ";</script>",
		"chapter": ch.String(),
		"boot":    boot,
	}, nil
}

// pickScript keeps the landing chapter when the URL opens it (?chapter=
// naming it: the bare page's "start here" card links there), in the page's
// language (?lang=, else the browser's, as play.PickLang), before the
// first paint; for any other view the section hides until the app shows it.
const pickScript = `<script>
(function () {
  "use strict";
  var q = new URLSearchParams(location.search), sec = document.getElementById("chapter");
  var lang = q.get("lang") === "zh" || (q.get("lang") !== "en" && /^zh/i.test(navigator.language || "")) ? "zh" : "en";
  var id = q.get("chapter") || "";
  var t = id && document.getElementById("sg-" + id + "-" + lang);
  if (id + "-" + lang === "` + landing + `-` + landingLang + `") return;
  if (!t) { sec.hidden = true; return; }
  sec.replaceChildren(t.content.cloneNode(true));
})();
</script>`

// chapterHTML is the inside of the chapter section for chapter id in lang,
// as the app's chapter panel lays it out: navigation (plain links here),
// the texts, the prediction asked (its options listed: the app makes them
// buttons) and,
// for demo 1, the table at the chapter's settings.
func chapterHTML(id, lang string) (string, error) {
	ch, _, ok := play.ChapterByID(id)
	if !ok {
		return "", fmt.Errorf("no chapter %q", id)
	}
	esc := html.EscapeString
	t := func(k string) string { return esc(play.T(lang, k)) }
	k := func(s string) string { return t("ch." + id + "." + s) }
	suffix := ""
	if lang != "en" {
		suffix = "&amp;lang=" + lang
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<nav id="ch-nav" aria-label="%s">`, t("ch.nav"))
	for _, c := range play.Chapters {
		cur := ""
		if c.ID == id {
			cur = ` aria-current="page"`
		}
		fmt.Fprintf(&b, `<a class="tab" href="?chapter=%s%s"%s>%s</a>`, c.ID, suffix, cur, t("ch."+c.ID+".short"))
	}
	b.WriteString(`</nav><div class="ch-cols"><div class="ch-text">`)
	fmt.Fprintf(&b, `<h2 id="ch-title">%s</h2>`, k("title"))
	fmt.Fprintf(&b, `<div id="ch-intro"><p class="q"><b>%s</b> %s</p><p><b>%s</b> %s</p><p><b>%s</b> %s</p></div>`,
		t("ch.question"), k("question"), t("ch.fixed"), k("fixed"), t("ch.moves"), k("moves"))
	b.WriteString(`<div id="ch-sliders"></div><div id="ch-narrative" aria-live="polite"></div>`)
	fmt.Fprintf(&b, `<div id="ch-predict"><h3>%s</h3><p>%s</p><ol class="opts">`, t("ch.predict"), k("predict"))
	for i := 1; i <= ch.Options; i++ {
		fmt.Fprintf(&b, `<li>%s</li>`, k(fmt.Sprintf("o%d", i)))
	}
	b.WriteString(`</ol></div><div id="ch-tasks" aria-live="polite"></div><div id="ch-embed"></div></div><div class="ch-show"><p id="ch-wait" class="wait"></p><div id="ch-figure"></div><div id="ch-table" aria-live="polite">`)
	took := ""
	if ch.Demo == 1 {
		tab, err := demo1(lang, ch.Preset)
		if err != nil {
			return "", err
		}
		b.WriteString(tableHTML(tab))
		took = t("ch.static")
	}
	fmt.Fprintf(&b, `</div><p id="ch-took" class="small" role="status">%s</p></div></div>`, took)
	return b.String(), nil
}

// demo1 computes demo 1's table at the settings of preset, as the app does.
func demo1(lang, preset string) (play.Table, error) {
	s := play.DefaultState()
	p, ok := play.PresetByName(preset)
	if !ok {
		return play.Table{}, fmt.Errorf("no preset %q", preset)
	}
	s.ApplyPreset(p)
	s.Lang = lang
	lec, d, err := play.LectureOf(s)
	if err != nil {
		return play.Table{}, err
	}
	return play.Demo1Table(lang, d.Batch, d.Context, lec.Demo1(d.Batch, d.Context, d.Prompts)), nil
}

// tableHTML writes t as the chapter panel writes a lecture table.
func tableHTML(t play.Table) string {
	esc := html.EscapeString
	var b strings.Builder
	b.WriteString(`<table class="lecture"><caption>` + esc(t.Caption) + `</caption><tr>`)
	for _, h := range t.Head {
		b.WriteString(`<th scope="col">` + esc(h) + `</th>`)
	}
	b.WriteString(`</tr>`)
	for _, r := range t.Rows {
		b.WriteString(`<tr>`)
		for i, c := range r {
			if i == 0 {
				b.WriteString(`<th scope="row">` + esc(c) + `</th>`)
			} else {
				b.WriteString(`<td>` + esc(c) + `</td>`)
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</table>`)
	return b.String()
}
