package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

// The loop a team runs: ask for the next answers to review, review them,
// and read the judge's mean corrected by them, on the API and the report.
// A judge one point too generous on 30 samples: 12 reviews drawn as
// review-next says bring the mean down by one.
func TestReviewNextAnswersCorrectTheJudgesMean(t *testing.T) {
	b, db := newServer(t, web.Config{})
	var rows []map[string]any
	for i := range 30 {
		rows = append(rows, map[string]any{"id": fmt.Sprintf("q%d", i), "question": fmt.Sprintf("Q%d?", i), "answer": "A."})
	}
	sr := storeRun(t, db, "qa.jsonl", jsonl(rows...), []string{"a"}, 1, func(s store.Sample, _ string, _ int) store.Result {
		return store.Result{Response: "x", Judgements: []store.Judgement{{Evaluator: "rubric",
			Scores: []store.Score{{Metric: "completeness", Value: float64(3 + s.Ordinal%3)}}}}}
	})
	id := sr.Run.ID
	type answer struct {
		ScoreID     int64   `json:"score_id"`
		SampleID    string  `json:"sample_id"`
		Condition   string  `json:"condition"`
		Metric      string  `json:"metric"`
		Probability float64 `json:"probability"`
	}
	next := func(n int) []answer {
		t.Helper()
		code, body := api(t, b, "GET", fmt.Sprintf("/api/runs/%d/review-next?n=%d", id, n), "", nil)
		var out struct{ Answers []answer }
		if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil {
			t.Fatalf("review-next: %d %s", code, body)
		}
		return out.Answers
	}
	first := next(12)
	_, raw := api(t, b, "GET", fmt.Sprintf("/api/runs/%d/review-next?n=1", id), "", nil)
	var keys struct{ Answers []map[string]any }
	json.Unmarshal([]byte(raw), &keys)
	for _, k := range []string{"score_id", "sample_id", "condition", "model", "repetition", "metric", "probability"} {
		if _, ok := keys.Answers[0][k]; !ok {
			t.Errorf("review-next's answer lacks %q: %s", k, raw)
		}
	}
	if len(first) != 12 {
		t.Fatalf("review-next?n=12 gave %d answers", len(first))
	}
	for k, a := range first {
		if a.Condition != "a" || a.Metric != "completeness" || !strings.HasPrefix(a.SampleID, "q") {
			t.Errorf("answer %+v: want a completeness score under a, with its sample's id", a)
		}
		// The k-th sample of 30 in a uniform order: drawn with k/30.
		if want := float64(k+1) / 30; math.Abs(a.Probability-want) > 1e-9 {
			t.Errorf("answer %d: probability %v, want %v", k, a.Probability, want)
		}
	}
	judged := map[int64]float64{}
	for _, r := range mustResults(t, db, id) {
		judged[r.Judgements[0].Scores[0].ID] = r.Judgements[0].Scores[0].Value
	}
	for _, a := range first {
		if code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", map[string]any{"score_id": a.ScoreID,
			"verdict": "override", "value": judged[a.ScoreID] - 1, "reviewer": "ann"}); code != 201 {
			t.Fatalf("review: %d %s", code, body)
		}
	}
	for _, a := range next(30) {
		for _, f := range first {
			if a.ScoreID == f.ScoreID {
				t.Errorf("score %d was reviewed and is offered again", a.ScoreID)
			}
		}
	}
	_, body := api(t, b, "GET", fmt.Sprintf("/api/runs/%d", id), "", nil)
	var sum struct {
		Conditions []struct {
			Metrics []struct {
				Mean float64
				PPI  *struct {
					Mean, Shift           float64
					Reviewed, Of, NotUsed int
					CI95                  [2]float64
				} `json:"ppi"`
			}
		}
	}
	json.Unmarshal([]byte(body), &sum)
	m := sum.Conditions[0].Metrics[0]
	if m.PPI == nil || math.Abs(m.PPI.Mean-(m.Mean-1)) > 1e-9 || m.PPI.Reviewed != 12 || m.PPI.Of != 30 {
		t.Fatalf("GET /api/runs/%d: metric %+v, ppi %+v; want the judge's mean less 1 from 12 of 30", id, m, m.PPI)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	row := doc.Find("#corrected tbody tr")
	if row.Length() != 1 || !strings.Contains(row.Text(), "12 of 30") || !strings.Contains(row.Text(), "-1.00") {
		t.Errorf("the report's corrected means: %q, want one row with 12 of 30 and a shift of -1.00", row.Text())
	}
	if got := strings.TrimSpace(doc.Find("#summary td.mean .corrected").Text()); !strings.Contains(got, fmt.Sprintf("%.2f", m.Mean-1)) {
		t.Errorf("the summary's mean cell says %q of the corrected mean, want %.2f", got, m.Mean-1)
	}
}

func mustResults(t *testing.T, db *store.DB, runID int64) []store.Result {
	t.Helper()
	results, err := db.Results(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// The paired comparison gives B − A corrected by reviews beside the
// judge's: a judge a point kinder to b than people are.
func TestThePairedComparisonIsCorrectedByReviews(t *testing.T) {
	b, db := newServer(t, web.Config{})
	var rows []map[string]any
	for i := range 6 {
		rows = append(rows, map[string]any{"id": fmt.Sprintf("q%d", i), "question": fmt.Sprintf("Q%d?", i), "answer": "A."})
	}
	sr := storeRun(t, db, "qa.jsonl", jsonl(rows...), []string{"a", "b"}, 1, func(s store.Sample, c string, _ int) store.Result {
		v := float64(2 + s.Ordinal%2)
		if c == "b" {
			v++
		}
		return store.Result{Response: "x", Judgements: []store.Judgement{{Evaluator: "rubric",
			Scores: []store.Score{{Metric: "completeness", Value: v}}}}}
	})
	for _, r := range mustResults(t, db, sr.Run.ID) {
		s := r.Judgements[0].Scores[0]
		person := s.Value
		if r.Condition == "b" {
			person--
		}
		if code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", sr.Run.ID), "", map[string]any{"score_id": s.ID,
			"verdict": "override", "value": person, "reviewer": "ann"}); code != 201 {
			t.Fatalf("review: %d %s", code, body)
		}
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d?a=a&b=b", sr.Run.ID))
	if got := strings.TrimSpace(doc.Find("#paired-table td.corrected").First().Text()); !strings.HasPrefix(got, "+0.00") {
		t.Errorf("B − A corrected by reviews: %q, want +0.00 (the judge says +1.00)", got)
	}
}
