package web_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

// download fetches an export and checks that it comes as an attachment.
func download(t *testing.T, b *browser, path string) []byte {
	t.Helper()
	resp, err := b.http.Get(b.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET %s: %d %q: %.200s", path, resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	return body
}

func TestExportJSON(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	body := download(t, b, fmt.Sprintf("/runs/%d/export.json", id))
	var got struct {
		Run     map[string]json.RawMessage   `json:"run"`
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for _, k := range []string{"id", "status", "dataset_sha256", "config"} {
		if _, ok := got.Run[k]; !ok {
			t.Errorf("run lacks %q", k)
		}
	}
	if string(got.Run["dataset_sha256"]) != `"feedc0de"` || len(got.Results) != 20 {
		t.Fatalf("sha %s, %d results", got.Run["dataset_sha256"], len(got.Results))
	}
	first := got.Results[0]
	for _, k := range []string{"sample_id", "condition", "repetition", "response", "error", "tokens_in", "tokens_out",
		"cost_usd", "latency_ms", "tool_calls", "unverified_claims", "scores"} {
		if _, ok := first[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	var scores []map[string]any
	json.Unmarshal(first["scores"], &scores)
	if len(scores) != 2 || scores[0]["evaluator"] != "rubric" || scores[0]["reasoning"] != "because "+xssScript ||
		scores[0]["judge_repetition"] == nil || scores[0]["value"] != 3.0 {
		t.Errorf("scores of the first result: %v", scores)
	}
	if string(first["sample_id"]) != `"s1\u003cimg src=x onerror=alert(1)\u003e"` {
		t.Errorf("sample_id %s, want the dataset's own id", first["sample_id"])
	}
	if bytes.Contains(body, []byte(urlSecret)) {
		t.Error("the export holds the password of a base URL")
	}
}

func TestExportCSVHasARowPerResultAndMetric(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	rows, err := csv.NewReader(bytes.NewReader(download(t, b, fmt.Sprintf("/runs/%d/export.csv", id)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 20*2+1 {
		t.Fatalf("%d rows, want 20 results × 2 metrics + header", len(rows))
	}
	if rows[0][1] != "sample_id" || rows[0][6] != "metric" || rows[0][8] != "value" {
		t.Errorf("header %q", rows[0])
	}
	errored := 0
	for _, r := range rows[1:] {
		if r[8] == "" && strings.HasPrefix(r[10], "agent: ") {
			errored++
		}
	}
	if errored != 4 {
		t.Errorf("%d rows of failed results, want 2 results × 2 metrics with their error", errored)
	}
}

func TestExportHTMLIsSelfContained(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	body := download(t, b, fmt.Sprintf("/runs/%d/export.html", id))
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("[src], [href], link, iframe, img, form").Each(func(_ int, s *goquery.Selection) {
		html, _ := goquery.OuterHtml(s)
		t.Errorf("the export refers outside itself: %.120s", html)
	})
	if n := doc.Find("script").Length(); n != 3 {
		t.Errorf("%d scripts, want echarts, report.js and transcripts.js inline", n)
	}
	if !strings.Contains(doc.Find("script").First().Text(), "echarts") || doc.Find("style").Length() != 1 {
		t.Error("ECharts and the styles should be inline")
	}
	charts := doc.Find(".chart[data-option]")
	if charts.Length() < 5 {
		t.Errorf("%d charts in the export", charts.Length())
	}
	charts.Each(func(_ int, s *goquery.Selection) {
		var opt struct {
			Series []struct {
				Data []any `json:"data"`
			} `json:"series"`
		}
		raw, _ := s.Attr("data-option")
		if err := json.Unmarshal([]byte(raw), &opt); err != nil || len(opt.Series) == 0 || len(opt.Series[0].Data) == 0 {
			id, _ := s.Attr("id")
			t.Errorf("chart %s has no data: %v", id, err)
		}
	})
	for _, secret := range []string{agentKeyEnv, judgeKeyEnv, urlSecret, "llm.example"} {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("the export shows %q", secret)
		}
	}
}

// A run's exported file holds every sample's transcript while they fit its
// budget; past it, the file stops with the samples that fit, says so, and
// is still whole: its scripts follow the list.
func TestExportHTMLStopsAtItsBudget(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	read := func() *goquery.Document {
		t.Helper()
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(download(t, b, fmt.Sprintf("/runs/%d/export.html", id))))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := read()
	if n := doc.Find("#transcript-list details.transcript").Length(); n != 5 {
		t.Errorf("%d transcripts, want the 5 samples'", n)
	}
	if doc.Find("#transcripts-cut").Length() != 0 {
		t.Error("the file says it stops short with every sample in it")
	}
	defer web.SetTranscriptBudget(1)()
	doc = read()
	list := doc.Find("#transcript-list details.transcript")
	if list.Length() != 1 || !strings.HasPrefix(list.Find("summary .mono").Text(), "s1") {
		t.Errorf("%d transcripts (%q first), want the first sample's alone", list.Length(), list.Find("summary .mono").First().Text())
	}
	if cut := strings.Join(strings.Fields(doc.Find("#transcripts-cut").Text()), " "); !strings.Contains(cut, "the first 1 sample of the 5 this run answered") {
		t.Errorf("the file says %q of where it stops", cut)
	}
	if n := doc.Find("#transcript-list ~ script, main ~ script").Length(); n != 3 {
		t.Errorf("%d scripts after the list, want the file whole", n)
	}
}

func TestExportCSVCellsAreNeverFormulas(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	formulas := []string{`=HYPERLINK("http://evil.example","x")`, "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"}
	for i, f := range formulas {
		r := &store.Result{RunID: id, SampleRow: samples[0], Condition: "baseline", Repetition: 3 + i, Attempts: 1, Error: f}
		if _, err := db.SaveResult(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := csv.NewReader(bytes.NewReader(download(t, b, fmt.Sprintf("/runs/%d/export.csv", id)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows[1:] {
		for _, f := range formulas {
			if r[10] == f {
				t.Errorf("error cell %q is written as it is", f)
			}
			if r[10] == "'"+f {
				seen++
			}
		}
	}
	if seen != len(formulas)*2 {
		t.Errorf("%d cells written as text, want %d", seen, len(formulas)*2)
	}
	if rows[1][8] == "" || strings.HasPrefix(rows[1][8], "'") {
		t.Errorf("a number is left as it is: %q", rows[1][8])
	}
}
