package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/runner/llm/llmtest"
)

// A pass/fail metric answered three times per sample: `assay run --json`
// gives each condition's pass^k, flip rate and Fleiss' κ, as computed by
// hand. The agent answers Q1 right every time, Q2 never, Q3 right on its
// first and third asking, Q4 on its second: 3, 0, 2 and 1 passes of 3.
func TestConsistencyFigures(t *testing.T) {
	right := map[string][]bool{"Q1": {true, true, true}, "Q2": {false, false, false}, "Q3": {true, false, true}, "Q4": {false, true, false}}
	var mu sync.Mutex
	asked := map[string]int{}
	srv := llmtest.New(func(req *llmtest.ChatRequest) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		q := last[strings.Index(last, "Q"):][:2]
		mu.Lock()
		n := asked[q]
		asked[q]++
		mu.Unlock()
		if right[q][n%3] {
			return llmtest.Reply{Content: "The answer is A."}
		}
		return llmtest.Reply{Content: "The answer is B."}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Q%d: which?\", \"choices\": [\"a\", \"b\", \"c\", \"d\"], \"answer\": \"A\"}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "mmlu.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: consistency
dataset: {path: ./mmlu.jsonl}
agent: {type: openai, model: m, base_url: %q}
conditions: {plain: {}}
evaluators: [exact_match]
execution: {num_repetitions: 3, max_concurrent: 4}
`, srv.URL), 0o644)
	var out bytes.Buffer
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--json", "--quiet"}, &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	var sum struct {
		Conditions []struct {
			PassHatK    map[string]float64 `json:"pass_hat_k"`
			FlipRate    *float64           `json:"flip_rate"`
			FleissKappa *float64           `json:"fleiss_kappa"`
			Metrics     []struct {
				PassAtK map[string]float64 `json:"pass_at_k"`
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || len(sum.Conditions) != 1 {
		t.Fatalf("%v: %s", err, out.String())
	}
	c := sum.Conditions[0]
	// By hand: pass^1 = (1 + 0 + 2/3 + 1/3)/4 = 1/2; pass^2 = (1 + 0 + 1/3 + 0)/4 = 1/3;
	// pass^3 = 1/4. Flip rate 2/4. κ: agreement 1, 1, 1/3, 1/3 → 2/3; chance
	// (6/12)² + (6/12)² = 1/2; (2/3 − 1/2)/(1 − 1/2) = 1/3. pass@2 = (1 + 0 + 1 + 2/3)/4.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(c.PassHatK["1"], 0.5) || !near(c.PassHatK["2"], 1.0/3) || !near(c.PassHatK["3"], 0.25) ||
		c.FlipRate == nil || !near(*c.FlipRate, 0.5) || c.FleissKappa == nil || !near(*c.FleissKappa, 1.0/3) {
		t.Errorf("consistency: %s", out.String())
	}
	if pa := c.Metrics[0].PassAtK; !near(pa["1"], c.PassHatK["1"]) || !near(pa["2"], (1+0+1+2.0/3)/4) {
		t.Errorf("pass@k %v", pa)
	}

	// The report shows them: pass^k beside pass@k, the flip rate and κ.
	base, stop := serve(t, "--db", db)
	defer stop()
	resp, err := http.Get(base + "/runs/1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	doc.Find("#consistency-table tbody tr").First().Find("td").Each(func(_ int, td *goquery.Selection) {
		cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
	})
	// pass@3 = (1 + 0 + 1 + 1)/4.
	if row, want := strings.Join(cells, " | "), "plain | exact_match | 0.500 | 0.333 | 0.500 0.500 | 0.333 0.667 | 0.250 0.750"; row != want {
		t.Errorf("the report's consistency row %q, want %q", row, want)
	}
	// The chart of pass^k and pass@k by k: the same figures, in percent.
	var option struct {
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Value float64 `json:"value"`
			} `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(doc.Find("#chart-pass-hat-k").AttrOr("data-option", "")), &option); err != nil || len(option.Series) != 2 {
		t.Fatalf("the pass^k chart: %v, %+v", err, option)
	}
	var got []string
	for _, s := range option.Series {
		var vs []string
		for _, d := range s.Data {
			vs = append(vs, fmt.Sprint(d.Value))
		}
		got = append(got, s.Name+": "+strings.Join(vs, " "))
	}
	if line, want := strings.Join(got, "; "), "plain pass^k: 50 33.3 25; plain pass@k: 50 66.7 75"; line != want {
		t.Errorf("the pass^k chart's lines %q, want %q", line, want)
	}
}

// A rubric metric with pass_at is pass/fail for consistency: a score at or
// above passes. Judged 5,5,5 | 2,1,3 | 4,2,4 | 3,4,2 with pass_at 4, the
// four samples pass 3, 0, 2 and 1 times, as in TestConsistencyFigures.
func TestConsistencyOfARubricMetricWithAThreshold(t *testing.T) {
	scores := map[string][]int{"Q1": {5, 5, 5}, "Q2": {2, 1, 3}, "Q3": {4, 2, 4}, "Q4": {3, 4, 2}}
	var mu sync.Mutex
	judged := map[string]int{}
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		q := regexp.MustCompile(`Q\d`).FindString(all.String())
		mu.Lock()
		n := judged[q]
		judged[q]++
		mu.Unlock()
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"quality": scores[q][n%3]})
		return llmtest.Reply{Content: answer}
	}, llmtest.Text("An answer.")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Q%d: why?\", \"answer\": \"Because.\"}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: threshold
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions: {plain: {}}
rubrics:
  grade:
    metrics:
      - {name: quality, description: "How good is the answer?", scale: "1-5", pass_at: 4}
evaluators: [{judge: grade}]
execution: {num_repetitions: 3, max_concurrent: 1}
`, srv.URL, srv.URL), 0o644)
	var out bytes.Buffer
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--json", "--quiet"}, &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	var sum struct {
		Conditions []struct {
			PassHatK map[string]float64 `json:"pass_hat_k"`
			FlipRate *float64           `json:"flip_rate"`
			Metrics  []struct {
				Name   string   `json:"name"`
				PassAt *float64 `json:"pass_at"`
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || len(sum.Conditions) != 1 {
		t.Fatalf("%v: %s", err, out.String())
	}
	c := sum.Conditions[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(c.PassHatK["1"], 0.5) || !near(c.PassHatK["2"], 1.0/3) || !near(c.PassHatK["3"], 0.25) || c.FlipRate == nil || !near(*c.FlipRate, 0.5) ||
		c.Metrics[0].PassAt == nil || *c.Metrics[0].PassAt != 4 {
		t.Errorf("consistency of quality ≥ 4: %s", out.String())
	}

	// A threshold on a pass/fail metric, or off its scale, is refused by line.
	bad := strings.Replace(string(readFile(t, filepath.Join(dir, "run.yaml"))), "pass_at: 4", "pass_at: 7", 1)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644)
	err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "bad.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:9: rubrics.grade.metrics[0].pass_at: want a score above 1 and at most 5") {
		t.Errorf("pass_at 7 on 1–5: %v", err)
	}
}
