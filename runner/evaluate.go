package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"assay"
	"assay/config"
	"assay/runner/judge"
	"assay/runner/llm"
	"assay/runner/scoring"
	"assay/store"
)

// judgeFunc is one LLM judge: rubric or arbiter.
type judgeFunc func(ctx context.Context, in judge.Input) (*judge.Judgement, error)

// judgeCall is one call a judged answer gets from an evaluator: one judge
// of the panel, one repetition, with its seed.
type judgeCall struct {
	fn    judgeFunc
	judge string // the panel judge's name; "" for a run's one judge
	index int    // its place in the panel
	rep   int
	seed  int
	model string // what its calls are priced as
}

// evaluators scores responses for one run.
type evaluators struct {
	list       []config.Evaluator
	kind       assay.Kind
	judges     map[config.Evaluator][]judgeCall // every judge of the panel × every repetition
	code       *scoring.CodeEvaluator
	sampleRate float64
	prices     prices
	clients    map[string]*llm.Client // a judge client of each endpoint
	batch      *batches               // nil: judge calls go live
}

// asksJudges reports whether the run's answers get judge calls.
func (e *evaluators) asksJudges() bool { return len(e.judges) > 0 }

// evaluate returns one judgement per evaluator (and judge call) for a
// response. A judge call done holds (by its part) is not made again; keep
// is given each judge call's judgement as it returns.
func (e *evaluators) evaluate(ctx context.Context, t task, response string, done map[string][]byte, keep func(part string, j store.Judgement)) []store.Judgement {
	var out []store.Judgement
	for _, ev := range e.list {
		if ev.UsesJudge() {
			if judged(e.sampleRate, t.key(), t.sample.SampleID) {
				for _, call := range e.judges[ev] {
					part := judgePart(ev.Label(), call.index, call.rep)
					var j store.Judgement
					if body, ok := done[part]; ok && json.Unmarshal(body, &j) == nil {
						out = append(out, j)
						continue
					}
					jctx := ctx
					if e.batch != nil {
						jctx = llm.InBatch(ctx, e.batch, batchLineID(t, part))
					}
					j = e.judge(jctx, ev, t, response, call)
					if ctx.Err() != nil {
						return out // cut short: the call's error is no judgement
					}
					keep(part, j)
					out = append(out, j)
				}
			}
			continue
		}
		out = append(out, e.deterministic(ctx, ev, t.sample, response))
	}
	return out
}

// batchLineID names a judge call's line in a batch: its task and part,
// unique in the run and the same when the run is resumed.
func batchLineID(t task, part string) string {
	return fmt.Sprintf("%d/%s/%d/%s", t.row, t.condition.Name, t.repetition, part)
}

// judgePart is the pending part that holds one judge call's judgement.
func judgePart(evaluator string, index, rep int) string {
	return fmt.Sprintf("judge/%s/%d/%d", evaluator, index, rep)
}

func (e *evaluators) judge(ctx context.Context, ev config.Evaluator, t task, response string, call judgeCall) store.Judgement {
	seed := call.seed
	j := store.Judgement{Evaluator: ev.Label(), JudgeRepetition: call.rep, Judge: call.judge, JudgeIndex: call.index, Seed: &seed}
	in := judge.Input{Question: t.sample.Input, Reference: judgeReference(e.kind, t.sample), Response: response}
	v, err := call.fn(ctx, in)
	if v != nil {
		j.Raw = v.Raw
		j.UnverifiedClaims = v.UnverifiedClaims
		j.TokensIn = v.TokensIn
		j.TokensOut = v.TokensOut
		j.LatencyMS = v.Latency.Milliseconds()
		j.Attempts = v.Attempts
		j.CacheReadTokens, j.CacheWriteTokens = v.CacheReadTokens, v.CacheWriteTokens
		j.CostUSD, _ = e.prices.cost(call.model, v.TokensIn, v.TokensOut, v.CacheReadTokens, v.CacheWriteTokens)
		if j.BatchedCalls = v.BatchedCalls; j.BatchedCalls > 0 {
			j.CostUSD -= e.prices.batchSaving(call.model, v.BatchedTokensIn, v.BatchedTokensOut)
		}
		if !v.Structured {
			j.Detail = "structured output was refused; the schema went in the prompt"
		}
	}
	if err != nil {
		j.Error = err.Error()
		j.ErrorKind = errorKind(err)
		return j
	}
	for _, m := range v.Metrics {
		j.Scores = append(j.Scores, store.Score{Metric: m.Name, Value: m.Value, Reasoning: m.Reasoning})
	}
	return j
}

func (e *evaluators) deterministic(ctx context.Context, ev config.Evaluator, s *store.Sample, response string) store.Judgement {
	j := store.Judgement{Evaluator: string(ev)}
	var out scoring.Outcome
	switch ev {
	case config.EvalExactMatch:
		out = scoring.ExactMatch(response, s.Choices, s.Reference)
	case config.EvalNumericMatch:
		out = scoring.NumericMatch(response, s.Reference)
	case config.EvalCodeExecution:
		var err error
		if out, err = e.code.Evaluate(ctx, s.Input, response, s.Test, s.EntryPoint); err != nil {
			j.Error = err.Error()
			j.ErrorKind = store.ErrorSandbox
			return j
		}
	default:
		j.Error = fmt.Sprintf("unknown evaluator %q", ev)
		return j
	}
	j.Raw, j.Detail = out.Extracted, out.Detail
	j.Scores = []store.Score{{Metric: out.Metric, Value: out.Value, Reasoning: explain(ev, out, s)}}
	return j
}

// explain says in one line why a deterministic evaluator scored as it did.
func explain(ev config.Evaluator, out scoring.Outcome, s *store.Sample) string {
	outcome := "fail"
	if out.Value == 1 {
		outcome = "pass"
	}
	switch ev {
	case config.EvalExactMatch:
		return fmt.Sprintf("%s: extracted %q, reference %q", outcome, out.Extracted, s.Reference)
	case config.EvalNumericMatch:
		return fmt.Sprintf("%s: extracted %q", outcome, out.Extracted)
	}
	if out.Detail != "" {
		return outcome + ": " + firstLine(out.Detail)
	}
	return outcome
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
