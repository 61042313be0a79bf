package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"assay/store"
	"assay/web"
)

// xss is text that would run script if a page put it in as HTML.
const xss = `<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))`

// TestSamplesPagesShowHostileTextAsText stores a dataset and model output
// carrying script, an onerror handler and a javascript: link everywhere a
// model or a dataset can put text, and reads both pages, the owner's and the shared.
func TestSamplesPagesShowHostileTextAsText(t *testing.T) {
	b, db := newServer(t, web.Config{})
	sr := storeRun(t, db, "hostile.jsonl", jsonl(map[string]any{"id": "x1", "question": "Q " + xss, "answer": "A " + xss,
		"topic": xss}), []string{"baseline"}, 1, func(store.Sample, string, int) store.Result {
		j := rubric(1, 1, 1, "claim "+xss)
		j.Raw = "raw " + xss
		j.Scores[0].Reasoning = "reasoning " + xss
		r := answered("response "+xss+"\n\n"+xss+"\n\n<a href=\"javascript:alert(2)\">y</a> <div onclick=alert(3)>z</div>", j)
		r.Error = "error " + xss
		args, _ := json.Marshal(map[string]string{"q": xss})
		r.ToolCalls = []store.ToolCall{{Turn: 1, Server: "s" + xss, Tool: "t" + xss, Arguments: args, Result: "result " + xss}}
		return r
	})
	share, err := db.CreateShare(context.Background(), sr.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	sample := sr.Samples["x1"].ID
	for _, base := range []string{fmt.Sprintf("/runs/%d", sr.Run.ID), "/r/" + share.Token} {
		for _, path := range []string{"/samples", "/samples?q=" + strings.ReplaceAll(xss[:8], "<", "%3C"),
			fmt.Sprintf("/samples/%d", sample), fmt.Sprintf("/samples/%d?q=%%3Cscript", sample)} {
			t.Run(base+path, func(t *testing.T) {
				resp, doc := b.get(base + path)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				assertInert(t, doc)
				if !strings.Contains(doc.Find("main").Text(), "<script>alert(1)</script>") {
					t.Error("the hostile text is not shown as text")
				}
			})
		}
	}
}

// assertInert fails on any script of the page's own making, event handler or javascript: URL.
func assertInert(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		n := s.Get(0)
		if n.Type != html.ElementNode {
			return
		}
		if n.Data == "script" {
			if src := s.AttrOr("src", ""); !strings.HasPrefix(src, "/static/") {
				t.Errorf("a script element: %q", s.Text())
			}
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
			}
			if strings.HasPrefix(v, "javascript:") || strings.Contains(v, "javascript:") && (a.Key == "href" || a.Key == "src" || a.Key == "action") {
				t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
			}
		}
		if n.Data == "img" {
			t.Errorf("an img element from model or dataset text: %v", n.Attr)
		}
	})
}
