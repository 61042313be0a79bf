package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"

	"github.com/PuerkitoBio/goquery"
)

// The owner judges a run's answers again from the API and from the
// report's form: each new run names its source, calls no agent, and its
// report says whose answers it judged.
func TestJudgeTheAnswersAgainFromTheAPIAndTheReport(t *testing.T) {
	var agentCalls atomic.Int64
	f := newRunServer(t, llmtest.JudgeAndAgent(panelJudge, func(*llmtest.ChatRequest) llmtest.Reply {
		agentCalls.Add(1)
		return llmtest.Reply{Content: "An answer."}
	}))
	ds := f.qaDataset(12)
	f.conditions("baseline")
	id := f.launchRun(ds, []string{"baseline"}, map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judge": map[string]any{"model": "lenient-model", "base_url": f.fake.URL}, "execution": map[string]any{"num_repetitions": 1}})
	if agentCalls.Load() != 12 {
		t.Fatalf("the run made %d agent calls, want 12", agentCalls.Load())
	}
	// Judged once, its judges page says how to judge the answers again.
	_, doc := f.get(fmt.Sprintf("/runs/%d/judges", id))
	if got := strings.Join(strings.Fields(doc.Find("#judges-alone").Text()), " "); !strings.Contains(got, fmt.Sprintf("assay rejudge --run %d --config JUDGE_FILE", id)) ||
		doc.Find("#judges-differ, #judges-agree").Length() != 0 {
		t.Errorf("the judges page of a run judged once says %q", got)
	}
	if href, _ := doc.Find("#judges-alone a").Attr("href"); href != fmt.Sprintf("/runs/%d#rejudge", id) {
		t.Errorf("the judges page links the form at %q", href)
	}
	// A person reviews the completeness of 10 samples of 12, in the review order.
	var next struct {
		Answers []struct {
			ScoreID int64 `json:"score_id"`
			Metric  string
		}
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d/review-next?n=30", id), &next)
	for _, a := range next.Answers {
		if a.Metric == "completeness" {
			api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", map[string]any{"score_id": a.ScoreID, "verdict": "override", "value": 2, "reviewer": "ann"})
		}
	}
	code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/rejudge", id), "", map[string]any{"evaluators": []string{"rubric"}, "agent": map[string]any{}})
	if code != 422 || !strings.Contains(body, "agent: not a judge's key") {
		t.Errorf("judge keys with the agent's: %d %s", code, body)
	}
	code, body = api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/rejudge", id), "", map[string]any{"judge": map[string]any{"model": "strict-model", "base_url": f.fake.URL}})
	var made struct {
		RunID int64 `json:"run_id"`
	}
	if json.Unmarshal([]byte(body), &made); code != 202 || made.RunID == 0 {
		t.Fatalf("rejudge: %d %s", code, body)
	}
	f.waitFor(made.RunID, store.RunCompleted)
	type summary struct {
		RejudgedFrom int64 `json:"rejudged_from"`
		Results      int   `json:"results"`
		Conditions   []struct {
			Metrics []struct {
				Name string
				Mean float64
				PPI  *struct{ Mean float64 } `json:"ppi"`
			}
		}
	}
	corrected := func(s summary) (judged, ppi float64) {
		for _, m := range s.Conditions[0].Metrics {
			if m.Name == "completeness" && m.PPI != nil {
				return m.Mean, m.PPI.Mean
			}
		}
		t.Fatalf("no corrected completeness: %+v", s)
		return 0, 0
	}
	var first, again summary
	f.getJSON(fmt.Sprintf("/api/runs/%d", id), &first)
	f.getJSON(fmt.Sprintf("/api/runs/%d", made.RunID), &again)
	if again.RejudgedFrom != id || again.Results != 12 || agentCalls.Load() != 12 {
		t.Errorf("the run judging again: rejudged from %d, %d results, %d agent calls in all; want %d, 12, still 12", again.RejudgedFrom, again.Results, agentCalls.Load(), id)
	}
	// Two judges of the same answers, the same people's reviews carried
	// over: their means differ, their corrected means are the people's.
	j1, p1 := corrected(first)
	j2, p2 := corrected(again)
	if j1 == j2 || math.Abs(p1-2) > 1e-9 || math.Abs(p2-2) > 1e-9 {
		t.Errorf("completeness judged %v and %v, corrected %v and %v; want two judges' means and both corrected to 2", j1, j2, p1, p2)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", made.RunID))
	if got := doc.Find("#run-rejudged").Text(); !strings.Contains(got, fmt.Sprintf("run %d", id)) || !strings.Contains(got, "no agent was called") {
		t.Errorf("the new run's report says %q of its answers", got)
	}
	// The source's report offers the form, filled in with its judge.
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	if got := doc.Find("#rejudge-judge").Text(); !strings.Contains(got, "model: lenient-model") {
		t.Fatalf("the form to judge again starts with %q, want the run's judge", got)
	}
	_, doc = f.browser.postForm(fmt.Sprintf("/runs/%d/rejudge", id), url.Values{"judge": {fmt.Sprintf("judge: {model: strict-model, base_url: %q}\n", f.fake.URL)}})
	if got := doc.Find("#run-rejudged").Text(); !strings.Contains(got, fmt.Sprintf("run %d", id)) {
		t.Errorf("the form led to a page that says %q of its answers", got)
	}
	// The list of runs says whose answers each run judging again judged.
	_, doc = f.get("/runs")
	var said []string
	doc.Find("#runs .rejudged").Each(func(_ int, s *goquery.Selection) {
		if href, _ := s.Find("a").Attr("href"); href == fmt.Sprintf("/runs/%d", id) {
			said = append(said, strings.Join(strings.Fields(s.Text()), " "))
		}
	})
	if len(said) != 2 || said[0] != fmt.Sprintf("answers of #%d", id) {
		t.Errorf("the runs list says of the runs judging again: %q", said)
	}
	// The judges of the same answers, side by side, from the source's report.
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	link, _ := doc.Find("#judges-link").Attr("href")
	if link != fmt.Sprintf("/runs/%d/judges", id) {
		t.Fatalf("the report links the judges page at %q", link)
	}
	_, doc = f.get(link)
	rows := doc.Find("#judges tbody tr")
	if rows.Length() != 3 || !strings.Contains(rows.First().Text(), "made the answers") ||
		!strings.Contains(rows.First().Text(), "lenient-model") || !strings.Contains(rows.Last().Text(), "strict-model") {
		t.Errorf("the judges page lists %d runs: %q", rows.Length(), rows.Text())
	}
	// The source's row carries its agreement with the reviews; the two
	// strict judges differ from the lenient one on the answers listed.
	if first := rows.First().Text(); !strings.Contains(first, "10") {
		t.Errorf("the source's row does not say how many scores people reviewed: %q", first)
	}
	differ := doc.Find("#judges-differ tbody tr")
	if differ.Length() == 0 || differ.First().Find("td.num").Length() != 3 {
		t.Errorf("where the judges differ: %d rows, %q", differ.Length(), differ.First().Text())
	}
}
