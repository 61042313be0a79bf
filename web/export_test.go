package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay"
	"assay/config"
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

// TestExportCSVAgreesWithJSON checks every cell of the CSV export that the
// JSON export also holds, on results whose every figure differs: the CSV
// reads only the columns it writes, and must read them all.
func TestExportCSVAgreesWithJSON(t *testing.T) {
	b, db := newServer(t, web.Config{})
	ctx := context.Background()
	var samples []store.Sample
	for i := 1; i <= 3; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: fmt.Sprintf("q%d", i), Input: "Question?", Reference: "42"})
	}
	ds := &store.Dataset{Name: "agree", Kind: assay.KindQA, SHA256: "a9ee", Format: "jsonl", Samples: len(samples)}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Name: "agree", Evaluators: []config.Evaluator{config.EvalRubric}}
	run := &store.Run{DatasetID: ds.ID, Config: cfg, Repetitions: 2, TotalTasks: 12,
		Conditions: []assay.Condition{{Name: "baseline"}, {Name: "with-docs"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, s := range rows {
		for _, c := range []string{"baseline", "with-docs"} {
			for rep := 1; rep <= 2; rep++ {
				i++
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep, Response: "42",
					TokensIn: 100 + i, TokensOut: 10 + i, CacheReadTokens: i, CostUSD: 0.001 * float64(i), LatencyMS: int64(300 + i),
					Attempts: 1 + i%3, Model: "m", Retries: []string{}}
				for k := range i % 3 {
					r.ToolCalls = append(r.ToolCalls, store.ToolCall{Turn: 1, Server: "docs", Tool: fmt.Sprint("search", k)})
				}
				j := store.Judgement{Evaluator: "rubric", Judge: []string{"", "panel-a"}[i%2], JudgeRepetition: i % 2,
					TokensIn: 900, Attempts: 1, Scores: []store.Score{
						{Metric: "completeness", Value: float64(1 + i%5), Reasoning: fmt.Sprint("reason ", i)},
						{Metric: "factual_adherence", Value: float64(1 + (i+2)%5), Reasoning: fmt.Sprint("fact ", i)}}}
				if i%4 == 0 {
					j.UnverifiedClaims = []string{fmt.Sprint("claim ", i)}
				}
				switch i {
				case 5:
					r.Error, r.ErrorKind, r.Response = "agent: too slow", store.ErrorTimeout, ""
				case 7:
					j.Error, j.ErrorKind, j.Scores = "judge: refused", store.ErrorRefused, nil
					r.Judgements = []store.Judgement{j}
				default:
					r.Judgements = []store.Judgement{j}
				}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	type jsonScore struct {
		ID              int64   `json:"id"`
		Metric          string  `json:"metric"`
		Value           float64 `json:"value"`
		Reasoning       string  `json:"reasoning"`
		JudgeRepetition int     `json:"judge_repetition"`
		Judge           string  `json:"judge"`
	}
	var doc struct {
		Results []struct {
			SampleRowID      int64            `json:"sample_row_id"`
			Condition        string           `json:"condition"`
			Repetition       int              `json:"repetition"`
			Error            string           `json:"error"`
			ErrorKind        string           `json:"error_kind"`
			TokensIn         int              `json:"tokens_in"`
			TokensOut        int              `json:"tokens_out"`
			CostUSD          float64          `json:"cost_usd"`
			LatencyMS        int64            `json:"latency_ms"`
			Attempts         int              `json:"attempts"`
			ToolCalls        []map[string]any `json:"tool_calls"`
			UnverifiedClaims []string         `json:"unverified_claims"`
			Scores           []jsonScore      `json:"scores"`
			Judgements       []struct {
				Error     string `json:"error"`
				ErrorKind string `json:"error_kind"`
			} `json:"judgements"`
		} `json:"results"`
	}
	if err := json.Unmarshal(download(t, b, fmt.Sprintf("/runs/%d/export.json", run.ID)), &doc); err != nil {
		t.Fatal(err)
	}
	table, err := csv.NewReader(bytes.NewReader(download(t, b, fmt.Sprintf("/runs/%d/export.csv", run.ID)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for k, name := range table[0] {
		col[name] = k
	}
	if len(table) != 1+12*2 {
		t.Fatalf("%d rows, want 12 results × 2 metrics + header", len(table))
	}
	checked := 0
	for n, row := range table[1:] {
		res := doc.Results[n/2] // both are in task order, the CSV a row per metric
		cell := func(name string) string { return row[col[name]] }
		key := fmt.Sprintf("%d/%s/%d", res.SampleRowID, res.Condition, res.Repetition)
		if got := cell("sample_row_id") + "/" + cell("condition") + "/" + cell("repetition"); got != key {
			t.Fatalf("row %d is %s, the JSON's result %s", n+1, got, key)
		}
		claims, _ := json.Marshal(res.UnverifiedClaims)
		for name, want := range map[string]string{
			"tokens_in": fmt.Sprint(res.TokensIn), "tokens_out": fmt.Sprint(res.TokensOut),
			"cost_usd": strconv.FormatFloat(res.CostUSD, 'f', -1, 64), "latency_ms": fmt.Sprint(res.LatencyMS),
			"attempts": fmt.Sprint(res.Attempts), "tool_calls": fmt.Sprint(len(res.ToolCalls)), "unverified_claims": string(claims),
		} {
			if cell(name) != want {
				t.Errorf("%s: %s %q, the JSON's %q", key, name, cell(name), want)
			}
		}
		metric := cell("metric")
		var score *jsonScore
		for k := range res.Scores {
			if res.Scores[k].Metric == metric {
				score = &res.Scores[k]
			}
		}
		if score == nil {
			want, kind := res.Error, res.ErrorKind
			if want == "" && len(res.Judgements) > 0 {
				want, kind = res.Judgements[0].Error, res.Judgements[0].ErrorKind
			}
			if cell("value") != "" || cell("error") != want || cell("error_kind") != kind || want == "" {
				t.Errorf("%s %s: value %q error %q (%s), the JSON's error %q (%s)", key, metric, cell("value"), cell("error"), cell("error_kind"), want, kind)
			}
			continue
		}
		for name, want := range map[string]string{
			"value": strconv.FormatFloat(score.Value, 'f', -1, 64), "reasoning": score.Reasoning, "score_id": fmt.Sprint(score.ID),
			"judge": score.Judge, "judge_repetition": fmt.Sprint(score.JudgeRepetition),
		} {
			if cell(name) != want {
				t.Errorf("%s %s: %s %q, the JSON's %q", key, metric, name, cell(name), want)
			}
		}
		checked++
	}
	if checked != 20 {
		t.Errorf("%d scored rows checked, want 20 (two results without scores)", checked)
	}
}
