package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/runner/llm/llmtest"
	"assay/runner/stats"
	"assay/store"
)

var questionNumber = regexp.MustCompile(`What is (\d+) \+`)

// noisyJudge scores completeness by the question (the samples differ) plus
// one point when asked with an odd seed: the judge's own noise.
func noisyJudge(req *llmtest.ChatRequest) llmtest.Reply {
	seed := 0
	if req.Seed != nil {
		seed = *req.Seed
	}
	var q int
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": 1 + q%3 + seed%2,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// The report splits each metric's variance into samples, agent and judge;
// its figures are those recomputed from the JSON export, which carries every
// judge score with its seed.
func TestReportShowsWhereTheVarianceComesFrom(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(noisyJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(9)
	form := f.runForm(ds, f.conditions("baseline", "careful"))
	form.Set("repetitions", "2")
	form.Set("judge_repetitions", "3")
	form.Set("judge_vary_seed", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	rows := doc.Find("#variance-table tbody tr")
	if rows.Length() != 6 {
		t.Fatalf("%d rows in the variance table, want 2 conditions × 3 metrics", rows.Length())
	}
	var row []string
	rows.Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find("td").Eq(0).Text()) == "baseline" && strings.Contains(s.Text(), "completeness") {
			s.Find("td").Each(func(_ int, td *goquery.Selection) { row = append(row, strings.TrimSpace(td.Text())) })
		}
	})
	if len(row) != 7 {
		t.Fatalf("no baseline completeness row: %q", rows.Text())
	}
	if got := doc.Find("#judge-consistency tbody tr").Length(); got != 6 {
		t.Errorf("%d rows of the judge against itself, want 6", got)
	}
	if got := doc.Find(".variance-sentences").Text(); !strings.Contains(got, "spread in rubric · completeness") {
		t.Errorf("sentences: %q", got)
	}
	if doc.Find("#chart-variance-1").Length() != 1 || doc.Find("#chart-variance-2").Length() != 1 {
		t.Error("a stacked chart per condition is missing")
	}

	// Recompute from the export: samples → answers → judge scores.
	resp, err := f.http.Get(f.srv.URL + fmt.Sprintf("/runs/%d/export.json", id))
	if err != nil {
		t.Fatal(err)
	}
	var export struct {
		Results []struct {
			SampleID   string `json:"sample_id"`
			Condition  string `json:"condition"`
			Repetition int    `json:"repetition"`
			Scores     []struct {
				Metric          string  `json:"metric"`
				Value           float64 `json:"value"`
				JudgeRepetition int     `json:"judge_repetition"`
			} `json:"scores"`
			Judgements []struct {
				Seed *int `json:"seed"`
			} `json:"judgements"`
		} `json:"results"`
	}
	json.NewDecoder(resp.Body).Decode(&export)
	resp.Body.Close()
	bySample := map[string]map[int][]float64{}
	seeds := map[int]bool{}
	for _, r := range export.Results {
		for _, j := range r.Judgements {
			seeds[*j.Seed] = true
		}
		if r.Condition != "baseline" {
			continue
		}
		if bySample[r.SampleID] == nil {
			bySample[r.SampleID] = map[int][]float64{}
		}
		for _, s := range r.Scores {
			if s.Metric == "completeness" {
				bySample[r.SampleID][r.Repetition] = append(bySample[r.SampleID][r.Repetition], s.Value)
			}
		}
	}
	if len(seeds) != 3 || !seeds[42] || !seeds[43] || !seeds[44] {
		t.Errorf("the export's seeds: %v", seeds)
	}
	var data [][][]float64
	for _, reps := range bySample {
		var answers [][]float64
		for _, scores := range reps {
			if len(scores) != 3 {
				t.Fatalf("an answer has %d judge scores in the export, want 3", len(scores))
			}
			answers = append(answers, scores)
		}
		data = append(data, answers)
	}
	c := stats.Decompose(data)
	s, a, j := c.Shares()
	want := []string{"baseline", "rubric · completeness", fmt.Sprintf("%.2f", c.Total)}
	for i, w := range want {
		if row[i] != w {
			t.Errorf("column %d: %q, recomputed %q", i, row[i], w)
		}
	}
	for i, share := range []float64{s, a, j} {
		if got := row[3+i]; !strings.HasPrefix(got, fmt.Sprintf("%.0f%% (", 100*share)) {
			t.Errorf("share %d: %q, recomputed %.1f%%", i, got, 100*share)
		}
	}
	if math.Abs(c.Judge-1.0/3) > 1e-9 {
		t.Errorf("the judge's variance %v, want 1/3 (scores x, x+1, x within each answer)", c.Judge)
	}
	if row[6] != "—" {
		t.Errorf("the first condition has no detectable difference from itself: %q", row[6])
	}

	var sum struct {
		Conditions []struct {
			Name    string `json:"name"`
			Metrics []struct {
				Name     string `json:"name"`
				Variance *struct {
					Total, Sample, Agent, Judge float64
				} `json:"variance"`
				MDD *float64 `json:"mdd"`
			} `json:"metrics"`
		} `json:"conditions"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", id), &sum)
	for ci, cond := range sum.Conditions {
		for _, m := range cond.Metrics {
			v := m.Variance
			if v == nil || math.Abs(v.Total-(v.Sample+v.Agent+v.Judge)) > 1e-9 || (m.MDD == nil) != (ci == 0) {
				t.Errorf("%s %s: variance %+v, mdd %v", cond.Name, m.Name, v, m.MDD)
			}
		}
	}
}
