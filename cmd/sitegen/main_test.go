package main

import (
	"html"
	"path/filepath"
	"strings"
	"testing"

	"servelab/wasm/play"
)

// TestSiteIsUpToDate fails when the catalogues or the lecture changed and
// the static page was not regenerated: `go run ./cmd/sitegen` fixes it.
func TestSiteIsUpToDate(t *testing.T) {
	stale, err := run(filepath.Join("..", "..", "site"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range stale {
		t.Errorf("%s is not what cmd/sitegen writes: run `go run ./cmd/sitegen` and commit it", f)
	}
}

// TestLandingChapterIsTheAppsFirstChapter checks the static chapter says
// what the app's first chapter says: its catalogue texts, and demo 1's
// table as the lecture computes it at the chapter's settings (14.89 ms is
// the lecture's 14.9 ms for a 512-token prompt among 32 decodes).
func TestLandingChapterIsTheAppsFirstChapter(t *testing.T) {
	parts, err := Parts()
	if err != nil {
		t.Fatal(err)
	}
	ch := parts["chapter"]
	first := ch[:strings.Index(ch, "</section>")]
	if play.Chapters[0].ID != landing {
		t.Fatalf("the landing chapter is %q, the app's first chapter %q", landing, play.Chapters[0].ID)
	}
	for _, k := range []string{"title", "question", "fixed", "moves", "predict", "o1"} {
		if want := html.EscapeString(play.T("en", "ch.demo1."+k)); !strings.Contains(first, want) {
			t.Errorf("the landing chapter lacks its %s %q", k, want)
		}
	}
	tab, err := demo1("en", play.Chapters[0].Preset)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) < 3 {
		t.Fatalf("demo 1's table has %d rows", len(tab.Rows))
	}
	var row512 []string
	for _, r := range tab.Rows {
		if !strings.Contains(first, "<th scope=\"row\">"+r[0]+"</th><td>"+strings.Join(r[1:], "</td><td>")+"</td>") {
			t.Errorf("the landing chapter's table lacks the row %v", r)
		}
		if r[0] == "512" {
			row512 = r
		}
	}
	if row512 == nil || row512[2] != "14.89" {
		t.Errorf("demo 1 with a 512-token prompt: %v, want the mixed step at 14.89 ms", row512)
	}
	// The landing chapter in every other language is a template the page can show.
	for _, lang := range play.Langs() {
		if lang != landingLang && !strings.Contains(ch, `<template id="sg-`+landing+`-`+lang+`">`) {
			t.Errorf("no template for the landing chapter in %s", lang)
		}
	}
	if zh := html.EscapeString(play.T("zh", "ch.demo1.question")); !strings.Contains(ch, zh) {
		t.Errorf("the Chinese first chapter lacks its question %q", zh)
	}
}

// TestFillRefusesUnknownAndUnclosedRegions checks a region with no part,
// or no end, is an error rather than a page left half written.
func TestFillRefusesUnknownAndUnclosedRegions(t *testing.T) {
	parts := map[string]string{"a": "A"}
	got, err := Fill([]byte("x<!-- sitegen:a -->old<!-- /sitegen:a -->y"), parts)
	if err != nil || string(got) != "x<!-- sitegen:a -->\nA\n<!-- /sitegen:a -->y" {
		t.Errorf("Fill = %q, %v", got, err)
	}
	if _, err := Fill([]byte("<!-- sitegen:b --><!-- /sitegen:b -->"), parts); err == nil {
		t.Errorf("a region without a part was filled")
	}
	if _, err := Fill([]byte("<!-- sitegen:a -->open"), parts); err == nil {
		t.Errorf("an unclosed region was filled")
	}
}
