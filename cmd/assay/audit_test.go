package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"assay/runner/audit"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// assay audit of a run whose judge scores padded answers a point higher
// and always prefers the first of two answers: --json gives the figures
// the interface names, the report page shows them, a gate on verbosity
// fails (exit 1), and the audit's calls are the estimate's.
func TestAssayAuditFindsTheJudgesBiases(t *testing.T) {
	var judged atomic.Int64
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		judged.Add(1)
		schema, _, _ := req.Schema()
		props, _ := schema["properties"].(map[string]any)
		if _, ok := props["first_better"]; ok {
			answer, _ := llmtest.JudgeAnswer(req, map[string]any{"first_better": 1})
			return llmtest.Reply{Content: answer}
		}
		score := 3
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "To put it another way") {
			score = 4
		}
		return rubricScores(req, score)
	}, llmtest.Text("The answer is 4.")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: audited
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: claude-sonnet-4, base_url: %q}
judge: {model: claude-opus-4-5, base_url: %q}
conditions: {plain: {}, brief: {system_prompt: "Be brief."}}
execution: {num_repetitions: 1, max_concurrent: 2}
prices: {claude-opus-4-5: {input_per_mtok: 5, output_per_mtok: 25}}
`, srv.URL, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--estimate", "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay audit --estimate: %v", err)
	}
	var est audit.Estimate
	json.Unmarshal(out.Bytes(), &est)
	// 4 answers padded, 1 judge; 4 pairs of plain and brief, both orders.
	if est.Calls != 4+8 || !est.Priced || est.CostUSD <= 0 {
		t.Fatalf("estimate %+v, want 12 priced calls", est)
	}
	// A budget under the estimate is refused before any call.
	judged.Store(0)
	err := run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--budget", fmt.Sprint(est.CostUSD / 2)}, io.Discard, io.Discard)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "over its budget") || judged.Load() != 0 {
		t.Fatalf("an audit over its budget: %v (%d calls made)", err, judged.Load())
	}
	out.Reset()
	err = run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--json", "--gate", "audit.verbosity<=0.2"}, &out, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitGateFailed {
		t.Errorf("a failed gate: %v, want exit %d", err, exitGateFailed)
	}
	var got struct {
		RunID  int64 `json:"run_id"`
		Probes struct {
			Verbosity struct {
				Delta float64    `json:"delta"`
				CI95  [2]float64 `json:"ci95"`
				N     int        `json:"n"`
			} `json:"verbosity"`
			Position struct {
				FlipRate  float64    `json:"flip_rate"`
				FirstWins float64    `json:"first_wins"`
				CI95      [2]float64 `json:"ci95"`
				N         int        `json:"n"`
			} `json:"position"`
			Self struct {
				Flagged []struct{ Judge, Model, Family string } `json:"flagged"`
			} `json:"self_preference"`
		} `json:"probes"`
		Calls  int      `json:"calls"`
		Passed *bool    `json:"passed"`
		Failed []string `json:"failed_gates"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	v, p := got.Probes.Verbosity, got.Probes.Position
	if got.RunID != 1 || v.Delta != 1 || v.N != 4 || v.CI95[0] <= 0 || p.FlipRate != 1 || p.FirstWins != 1 || p.N != 4 ||
		len(got.Probes.Self.Flagged) != 1 || got.Probes.Self.Flagged[0].Family != "claude" ||
		got.Passed == nil || *got.Passed || len(got.Failed) != 1 || got.Calls != est.Calls || judged.Load() != int64(est.Calls) {
		t.Errorf("audit: %s (the fake judge answered %d)", out.String(), judged.Load())
	}
	out.Reset()
	if err := run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--probes", "verbosity,position"}, &out, io.Discard); err != nil {
		t.Fatalf("assay audit: %v", err)
	}
	for _, want := range []string{"verbosity: padding 4 answers with content-free sentences moved their scores by +1.00 on average",
		"the judge is swayed by length", "position: of 4 pairs judged in both orders, 100% changed winner with the order"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the audit's text lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "self-preference") {
		t.Errorf("a probe not asked for is in the text:\n%s", out.String())
	}
	// With a gate on a figure, the gate judges it, once, with its interval.
	out.Reset()
	err = run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--probes", "verbosity,position", "--gate", "audit.verbosity<=0.2"}, &out, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitGateFailed {
		t.Errorf("a failed gate: %v, want exit %d", err, exitGateFailed)
	}
	if text := out.String(); !strings.Contains(text, "(95% CI +1.00 to +1.00): gate audit.verbosity<=0.2 failed: the size of the change, 1.000 (95% CI 1.000 to 1.000), is above 0.2") ||
		strings.Contains(text, "swayed by length") || strings.Contains(text, "no bias shown") || strings.Count(text, "1.000") != 3 {
		t.Errorf("the gate's judgement is not said once, with its interval:\n%s", text)
	}
	// The JSON export carries the latest audit.
	out.Reset()
	if err := run(context.Background(), []string{"export", "--run", "1", "--format", "json", "--db", db, "-o", "-"}, &out, io.Discard); err != nil {
		t.Fatalf("assay export: %v", err)
	}
	var export struct {
		Run struct {
			Audit *struct {
				Probes struct {
					Position struct {
						FlipRate float64 `json:"flip_rate"`
					} `json:"position"`
				} `json:"probes"`
			} `json:"audit"`
		} `json:"run"`
	}
	if err := json.Unmarshal(out.Bytes(), &export); err != nil || export.Run.Audit == nil || export.Run.Audit.Probes.Position.FlipRate != 1 {
		t.Errorf("the export's audit: %v %s", err, out.String()[:min(out.Len(), 400)])
	}
	// The audit is kept with the run.
	sdb, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := sdb.LatestAudit(context.Background(), 1)
	sdb.Close()
	if err != nil || !bytes.Contains(kept, []byte(`"flip_rate":1`)) {
		t.Errorf("the audit kept with the run: %s %v", kept, err)
	}
	// A gate on the judge against people: nobody has reviewed this run.
	out.Reset()
	err = run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--samples", "4", "--probes", "verbosity", "--gate", "agreement.completeness.kappa>=0.6"}, &out, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitGateFailed || !strings.Contains(out.String(), "gate agreement.completeness.kappa>=0.6 failed: completeness: nobody reviewed a score of it") {
		t.Errorf("a gate on the judge's agreement with no reviews: %v\n%s", err, out.String())
	}
}

// A panel judging two models' answers, its Claude judge scoring the Claude
// model's answers a point above what the GPT judge gives them and the GPT
// model's as it does: the audit measures that judge's self-preference at
// +1 (per sample: Claude's answers +1 against the other judge, GPT's 0).
func TestAuditMeasuresSelfPreference(t *testing.T) {
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		score := 3
		if strings.HasPrefix(req.Model, "claude") && strings.Contains(req.Messages[len(req.Messages)-1].Content, "from Claude") {
			score = 4
		}
		return rubricScores(req, score)
	}, func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.HasPrefix(req.Model, "claude") {
			return llmtest.Reply{Content: "An answer from Claude."}
		}
		return llmtest.Reply{Content: "An answer from GPT."}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: families
dataset: {path: ./qa.jsonl}
agent:
  type: openai
  base_url: %[1]q
  models: [{name: sonnet, model: claude-sonnet-4}, {name: mini, model: gpt-4o-mini}]
judges:
  - {name: opus, model: claude-opus-4-5, base_url: %[1]q}
  - {name: four, model: gpt-4o, base_url: %[1]q}
conditions: {plain: {}}
execution: {num_repetitions: 1, max_concurrent: 2}
`, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--probes", "self", "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay audit: %v", err)
	}
	var got struct {
		Probes struct {
			Self struct {
				Flagged  []struct{ Judge, Family string } `json:"flagged"`
				Delta    *float64                         `json:"delta"`
				CI95     *[2]float64                      `json:"ci95"`
				Measured []struct {
					Judge   string  `json:"judge"`
					Delta   float64 `json:"delta"`
					Samples int     `json:"samples"`
				} `json:"measured"`
			} `json:"self_preference"`
		} `json:"probes"`
		Calls int `json:"calls"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	s := got.Probes.Self
	if len(s.Flagged) != 2 || len(s.Measured) != 2 || s.Measured[0].Judge != "opus" || s.Measured[0].Delta != 1 || s.Measured[0].Samples != 5 ||
		s.Delta == nil || *s.Delta != 1 || s.CI95 == nil || got.Calls != 0 {
		t.Errorf("self-preference: %s", out.String())
	}
}

// assay run --gate 'audit.verbosity<=0.2' audits the completed run's judge
// and fails (exit 1) when the judge is swayed by length; --json carries
// the audit and how its gate held. A run without a judge refuses such a
// gate before it starts.
func TestRunGatesOnAJudgeAudit(t *testing.T) {
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		score := 3
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "To put it another way") {
			score = 4
		}
		return rubricScores(req, score)
	}, llmtest.Text("The answer is 4.")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	write := func(name, evaluators string) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, fmt.Appendf(nil, `name: gated
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions: {plain: {}}
evaluators: [%s]
execution: {num_repetitions: 1}
`, srv.URL, srv.URL, evaluators), 0o644)
		return path
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"run", "--config", write("run.yaml", "rubric"), "--db", filepath.Join(dir, "a.db"), "--quiet", "--json",
		"--gate", "audit.verbosity<=0.2", "--gate", "audit.position<=0.1", "--audit-samples", "3"}, &out, io.Discard)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitGateFailed {
		t.Fatalf("assay run with a judge swayed by length: %v, want exit %d", err, exitGateFailed)
	}
	var got struct {
		Passed *bool `json:"passed"`
		Audit  *struct {
			Probes struct {
				Verbosity struct {
					Delta float64 `json:"delta"`
					N     int     `json:"n"`
				} `json:"verbosity"`
			} `json:"probes"`
		} `json:"audit"`
		AuditGates []struct {
			Gate    string `json:"gate"`
			Held    bool   `json:"held"`
			Message string `json:"message"`
		} `json:"audit_gates"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.Passed == nil || *got.Passed || got.Audit == nil || got.Audit.Probes.Verbosity.Delta != 1 || got.Audit.Probes.Verbosity.N != 3 ||
		len(got.AuditGates) != 2 || got.AuditGates[0].Held || got.AuditGates[0].Message != "gate audit.verbosity<=0.2 failed: the size of the change, 1.000 (95% CI 1.000 to 1.000), is above 0.2" ||
		got.AuditGates[1].Held || got.AuditGates[1].Message != "gate failed: the position probe gave no figure" {
		t.Errorf("assay run --json: %s", out.String())
	}
	err = run(context.Background(), []string{"run", "--config", write("exact.yaml", "exact_match"), "--db", filepath.Join(dir, "b.db"), "--quiet",
		"--gate", "audit.verbosity<=0.2"}, io.Discard, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "no judge to audit") {
		t.Errorf("an audit gate on a run without a judge: %v", err)
	}
}

// A run's one judge, of the Claude family, judging a Claude and a GPT
// model: reviewers score the Claude answers a point below the judge and
// agree with it on the GPT ones. The audit measures its self-preference
// against people at +1, without a panel.
func TestAuditMeasuresSelfPreferenceAgainstReviews(t *testing.T) {
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		return rubricScores(req, 4)
	}, func(req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "An answer from " + req.Model + "."}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: reviewed
dataset: {path: ./qa.jsonl}
agent:
  type: openai
  base_url: %[1]q
  models: [{name: sonnet, model: claude-sonnet-4}, {name: mini, model: gpt-4o-mini}]
judge: {model: claude-opus-4-5, base_url: %[1]q}
conditions: {plain: {}}
execution: {num_repetitions: 1}
`, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	sdb, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	results, _ := sdb.Results(context.Background(), 1)
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				if s.Metric != "completeness" {
					continue
				}
				v := &store.Review{RunID: 1, ScoreID: s.ID, Reviewer: "ann", Verdict: store.VerdictAgree, JudgeValue: s.Value, Value: s.Value}
				if strings.Contains(r.Response, "claude") {
					v.Verdict, v.Value = store.VerdictOverride, s.Value-1
				}
				if err := sdb.SaveReview(context.Background(), v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	sdb.Close()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"audit", "--run", "1", "--db", db, "--probes", "self", "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay audit: %v", err)
	}
	var got struct {
		Probes struct {
			Self struct {
				Delta     *float64 `json:"delta"`
				ByReviews []struct {
					Judge  string     `json:"judge"`
					Family string     `json:"family"`
					Delta  float64    `json:"delta"`
					CI95   [2]float64 `json:"ci95"`
				} `json:"by_reviews"`
			} `json:"self_preference"`
		} `json:"probes"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	s := got.Probes.Self
	if len(s.ByReviews) != 1 || s.ByReviews[0].Family != "claude" || s.ByReviews[0].Delta != 1 || s.Delta == nil || *s.Delta != 1 {
		t.Errorf("self-preference against reviews: %s", out.String())
	}
}

// rubricScores answers a rubric judge's request with score on every metric.
func rubricScores(req *llmtest.ChatRequest, score int) llmtest.Reply {
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": score, "completeness": score,
		"helpfulness_and_clarity": score, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}
