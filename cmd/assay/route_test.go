package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"assay/internal/fixture"
	"assay/runner/llm/llmtest"
)

// threeModels answers GSM8K questions as three models would: good-model
// always right, slow and dear; mid-model right on about two thirds; cheap-model
// right on about a third, fast and cheap. answers maps a question to its
// final number.
func threeModels(answers map[string]string) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		var answer string
		for q, a := range answers {
			if strings.Contains(last, q) {
				answer = a
			}
		}
		h := fnv.New32a()
		h.Write([]byte(last))
		roll := h.Sum32() % 3
		right := map[string]bool{"good-model": true, "mid-model": roll != 0, "cheap-model": roll == 0}[req.Model]
		delay := map[string]time.Duration{"good-model": 6 * time.Millisecond, "mid-model": 3 * time.Millisecond}[req.Model]
		if !right {
			answer = "7"
		}
		return llmtest.Reply{Content: "Working it out... #### " + answer, Delay: delay}
	}
}

// routedRun runs the three models over a GSM8K-shaped file and returns the
// database's path and the run's id.
func routedRun(t *testing.T, path string, wrap ...func(llmtest.Handler) llmtest.Handler) (string, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row struct{ Question, Answer string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		_, final, _ := strings.Cut(row.Answer, "####")
		answers[row.Question[:min(60, len(row.Question))]] = strings.TrimSpace(final)
	}
	h := threeModels(answers)
	for _, w := range wrap {
		h = w(h)
	}
	srv := llmtest.New(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`name: three-models
dataset: {path: %q}
agent:
  type: openai
  base_url: %q
  models:
    - {name: good, model: good-model}
    - {name: mid, model: mid-model}
    - {name: cheap, model: cheap-model}
conditions: {baseline: {}}
execution: {num_repetitions: 1, max_concurrent: 6}
prices:
  good-model: {input_per_mtok: 10, output_per_mtok: 30}
  mid-model: {input_per_mtok: 1, output_per_mtok: 3}
  cheap-model: {input_per_mtok: 0.1, output_per_mtok: 0.3}
`, path, srv.URL)
	os.WriteFile(filepath.Join(dir, "run.yaml"), []byte(cfg), 0o644)
	dbPath := filepath.Join(dir, "assay.db")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", dbPath, "--quiet", "--json"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var sum struct {
		RunID      int64 `json:"run_id"`
		Conditions []struct {
			Name       string
			Results    int
			Errors     int
			ErrorKinds map[string]int `json:"error_kinds"`
			TopErrors  []struct {
				Message string
				Count   int
			} `json:"top_errors"`
			Models []struct {
				Name    string
				Results int
				CostUSD float64 `json:"cost_usd"`
				Metrics []struct{ Mean float64 }
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(sum.Conditions) != 1 || sum.Conditions[0].Name != "baseline" || len(sum.Conditions[0].Models) != 3 {
		t.Fatalf("the summary's conditions and models: %s", out.String())
	}
	c := sum.Conditions[0]
	// A condition over every model counts their errors by kind and message.
	if c.Errors > 0 && (len(c.ErrorKinds) == 0 || len(c.TopErrors) == 0 || c.TopErrors[0].Count != c.Errors) {
		t.Errorf("%d errors under %s, but error kinds %v and top errors %+v", c.Errors, c.Name, c.ErrorKinds, c.TopErrors)
	}
	good, cheap := c.Models[0], c.Models[2]
	if good.Name != "good" || good.Metrics[0].Mean != 1 || cheap.Metrics[0].Mean >= good.Metrics[0].Mean ||
		cheap.CostUSD >= good.CostUSD || c.Results != 3*good.Results && len(wrap) == 0 {
		t.Errorf("models: %+v", c.Models)
	}
	return dbPath, sum.RunID
}

// A run over three models, then the replay: the Oracle on top, Always-best
// sending all to the good model, the routers somewhere between cheap and
// good; the same figures for the same seed; bad flags refused.
func TestRouteReplaysAThreeModelRun(t *testing.T) {
	for _, name := range []string{"testdata:gsm8k.jsonl", "shared:gsm8k_sample.jsonl"} {
		t.Run(name, func(t *testing.T) {
			var path string
			if shared, ok := strings.CutPrefix(name, "shared:"); ok {
				path = fixture.Shared(t, shared)
			} else {
				path = fixture.Path(strings.TrimPrefix(name, "testdata:"))
			}
			dbPath, id := routedRun(t, path)
			args := []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--orders", "40", "--json"}
			var out, errOut bytes.Buffer
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("%v\n%s", err, errOut.String())
			}
			var got struct {
				RunID      int64 `json:"run_id"`
				Samples    int   `json:"samples"`
				LeftOut    int   `json:"left_out"`
				Orders     int   `json:"orders"`
				Algorithms []struct {
					Name        string             `json:"name"`
					Quality     float64            `json:"quality"`
					QualityCI95 [2]float64         `json:"quality_ci95"`
					CostUSD     float64            `json:"cost_usd"`
					LatencyMS   float64            `json:"latency_ms"`
					Reward      float64            `json:"reward"`
					Regret      float64            `json:"regret"`
					Share       map[string]float64 `json:"share"`
				} `json:"algorithms"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.RunID != id || got.Orders != 40 || got.LeftOut != 0 || len(got.Algorithms) != 12 {
				t.Fatalf("the replay: %s", out.String()[:min(400, out.Len())])
			}
			algo := map[string]int{}
			for i, a := range got.Algorithms {
				algo[a.Name] = i
			}
			oracle, best, cheapest := got.Algorithms[algo["oracle"]], got.Algorithms[algo["always_best"]], got.Algorithms[algo["always_cheapest"]]
			if oracle.Quality != 1 || best.Share["good"] != 1 || cheapest.Share["cheap"] != 1 || cheapest.CostUSD >= best.CostUSD {
				t.Errorf("baselines: oracle %.3f, always_best %v, always_cheapest %v", oracle.Quality, best.Share, cheapest.Share)
			}
			// The oracle sends a query the cheap model answers right to it: it costs less than always_best.
			if oracle.CostUSD >= best.CostUSD {
				t.Errorf("the oracle costs %.6f, always_best %.6f", oracle.CostUSD, best.CostUSD)
			}
			for _, a := range got.Algorithms {
				if a.QualityCI95[1] > oracle.Quality+1e-9 || a.Regret < -1e-9 {
					t.Errorf("%s: quality up to %.3f, regret %.3f", a.Name, a.QualityCI95[1], a.Regret)
				}
			}
			var again bytes.Buffer
			run(context.Background(), args, &again, &errOut)
			if again.String() != out.String() {
				t.Error("the same seed gave other figures")
			}
			// The hybrids switch when told: switching at once is LinUCB from the first query.
			var switched bytes.Buffer
			run(context.Background(), append(args, "--switch-after", "1"), &switched, &errOut)
			if switched.String() == out.String() {
				t.Error("--switch-after changed nothing")
			}
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--orders", "0"}, "--orders must be at least 1"},
				{[]string{"--weights", "0,0,0"}, "add up to more than 0"},
				{[]string{"--condition", "nope"}, `no condition "nope"`},
				{[]string{"--switch-after", "-2"}, "--switch-after must be at least 0"},
			} {
				var o, e bytes.Buffer
				err := run(context.Background(), append([]string{"route", "--run", fmt.Sprint(id), "--db", dbPath}, tc.args...), &o, &e)
				if err == nil || exitCodeOf(err) != 2 || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
				}
			}
		})
	}
}

// With --embeddings-model the contextual algorithms see the questions'
// embeddings from an OpenAI-compatible endpoint, fetched once and kept.
func TestRouteWithEmbeddings(t *testing.T) {
	dbPath, id := routedRun(t, fixture.Path("gsm8k.jsonl"))
	var calls, inputs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		inputs.Add(int64(len(req.Input)))
		var data []map[string]any
		for i, text := range req.Input {
			vec := make([]float32, 24)
			for _, w := range strings.Fields(text) {
				h := fnv.New32a()
				h.Write([]byte(w))
				vec[h.Sum32()%24]++
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vec})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 10, "total_tokens": 10}})
	}))
	t.Cleanup(srv.Close)
	args := []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--orders", "10", "--json",
		"--embeddings-model", "tiny-embed", "--embeddings-url", srv.URL + "/v1"}
	for round := range 2 {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Fatalf("%v\n%s", err, errOut.String())
		}
		var got struct {
			Features   string `json:"features"`
			Samples    int    `json:"samples"`
			Algorithms []struct{ Name string }
		}
		json.Unmarshal(out.Bytes(), &got)
		if got.Features != "embeddings" || len(got.Algorithms) != 12 || got.Samples != 10 {
			t.Fatalf("round %d: %s", round, out.String()[:min(300, out.Len())])
		}
		if calls.Load() != 1 || inputs.Load() != 10 {
			t.Errorf("round %d: %d requests for %d questions; want one request for the 10, then none", round, calls.Load(), inputs.Load())
		}
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--embeddings-model", "other-embed",
		"--embeddings-url", srv.URL + "/v1", "--embeddings-key-env", "ASSAY_TEST_UNSET_KEY"}, &out, &errOut)
	if err == nil || exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "ASSAY_TEST_UNSET_KEY is not set") {
		t.Errorf("an unset key: %v", err)
	}
}

// A sample some model did not answer is left out of the replay, and said
// so; a run of one model cannot be replayed.
func TestRouteLeavesOutUnansweredSamples(t *testing.T) {
	refuse := func(h llmtest.Handler) llmtest.Handler {
		return func(req *llmtest.ChatRequest) llmtest.Reply {
			if req.Model == "cheap-model" && strings.Contains(req.Messages[len(req.Messages)-1].Content, "A baker makes 12 loaves") {
				return llmtest.Reply{Status: 400, Content: "this model refuses the question"}
			}
			return h(req)
		}
	}
	data, _ := os.ReadFile(fixture.Path("gsm8k.jsonl"))
	if !strings.Contains(string(data), "A baker makes 12 loaves") {
		t.Fatal("the fixture changed: pick another question to refuse")
	}
	dbPath, id := routedRun(t, fixture.Path("gsm8k.jsonl"), refuse)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--orders", "5", "--json"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var got struct {
		Samples int `json:"samples"`
		LeftOut int `json:"left_out"`
	}
	json.Unmarshal(out.Bytes(), &got)
	if got.LeftOut != 1 || got.Samples != 9 {
		t.Errorf("samples %d, left out %d; want 9 and 1", got.Samples, got.LeftOut)
	}
	out.Reset()
	if err := run(context.Background(), []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--orders", "5"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "9 samples answered by every model (1 left out)") {
		t.Errorf("the table's head: %.200q", out.String())
	}

	b := newGateBench(t, "execution: {num_repetitions: 1}\n")
	if code, _, errOut := b.run(); code != 0 {
		t.Fatalf("the one-model run: exit %d\n%s", code, errOut)
	}
	err := run(context.Background(), []string{"route", "--run", "1", "--db", b.db}, &out, &errOut)
	if err == nil || exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "Run 1 is not over several models: routing needs a run over two models or more") {
		t.Errorf("a run of one model: %v", err)
	}
}

// --reward picks conduit's library formula over its documented one; the
// output says which, and another name is refused with exit status 2.
func TestRouteRewardChoice(t *testing.T) {
	dbPath, id := routedRun(t, fixture.Path("gsm8k.jsonl"))
	rewardOf := func(extra ...string) (string, float64) {
		var out bytes.Buffer
		args := append([]string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--orders", "5", "--json"}, extra...)
		if err := run(context.Background(), args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Reward string `json:"reward"`
			Models []struct {
				Reward float64 `json:"reward"`
			} `json:"models"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Models) == 0 {
			t.Fatalf("%v: %s", err, out.String())
		}
		return r.Reward, r.Models[0].Reward
	}
	docs, docsReward := rewardOf()
	conduit, conduitReward := rewardOf("--reward", "conduit")
	if docs != "docs" || conduit != "conduit" || docsReward == conduitReward {
		t.Errorf("rewards: %s %.4f, %s %.4f", docs, docsReward, conduit, conduitReward)
	}
	err := run(context.Background(), []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--reward", "mine"}, io.Discard, io.Discard)
	if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "--reward must be docs or conduit") {
		t.Errorf("--reward mine: exit %d, %v", exitCodeOf(err), err)
	}
}
