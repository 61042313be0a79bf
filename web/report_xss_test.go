package web_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

// TestReportShowsModelAndDatasetTextAsText stores a run whose name, model,
// dataset name, sample ids, questions, responses, reasoning and claims hold
// markup, and reads the report as its owner, through a share link and as an
// exported file.
func TestReportShowsModelAndDatasetTextAsText(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	sh, err := db.CreateShare(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"owner page":  fmt.Sprintf("/runs/%d", id),
		"shared page": "/r/" + sh.Token,
		"fragment":    fmt.Sprintf("/runs/%d/report", id),
		"export":      fmt.Sprintf("/runs/%d/export.html", id),
	}
	for name, path := range pages {
		t.Run(name, func(t *testing.T) {
			resp, err := b.http.Get(b.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := goquery.NewDocumentFromReader(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			doc.Find("script").Each(func(_ int, s *goquery.Selection) {
				src, ok := s.Attr("src")
				if (ok && !strings.HasPrefix(src, "/static/")) || strings.Contains(s.Text(), `alert("x")`) {
					t.Errorf("a script that is not assay's: src %q", src)
				}
			})
			if n := doc.Find("img, [onerror]").Length(); n != 0 {
				t.Errorf("%d elements made from model or dataset text", n)
			}
			doc.Find("[href]").Each(func(_ int, s *goquery.Selection) {
				if href, _ := s.Attr("href"); strings.HasPrefix(strings.ToLower(strings.TrimSpace(href)), "javascript:") {
					t.Errorf("a javascript: link %q", href)
				}
			})
			body := doc.Text()
			for _, want := range []string{"hand run " + xssScript, "golden " + xssImg} {
				if name != "fragment" && !strings.Contains(body, want) {
					t.Errorf("%q is not shown as text", want)
				}
			}
			if !strings.Contains(body, "s1"+xssImg) || !strings.Contains(body, xssLink) {
				t.Error("the sample id and question should be shown as text in the largest gaps")
			}
		})
	}
}

func TestChartOptionsEscapeMarkup(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	raw := download(t, b, fmt.Sprintf("/runs/%d/export.html", id))
	for _, chunk := range bytes.Split(raw, []byte("data-option=\""))[1:] {
		opt := chunk[:bytes.IndexByte(chunk, '"')]
		if bytes.ContainsAny(opt, "<>") {
			t.Errorf("a chart option holds raw markup: %.120s", opt)
		}
	}
}
