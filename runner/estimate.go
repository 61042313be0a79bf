package runner

import (
	"iter"
	"slices"
	"unicode/utf8"

	"assay"
	"assay/config"
	"assay/store"
)

// Estimate is a forecast of a run's calls, tokens and cost, made before it is launched.
type Estimate struct {
	AgentCalls int
	JudgeCalls int
	TokensIn   int // agent and judge calls
	TokensOut  int
	CostUSD    float64
	// LiveUSD is the cost with every call live, and BatchUSD with the judge
	// calls in batches, at their models' batch discount; CostUSD is one of
	// them, as the run is set to go.
	LiveUSD, BatchUSD float64
	Unpriced          []string // models the run would call that have no price: their calls count as free
	// agentUSD, agentIn and agentOut are the agent's part of the figures.
	agentUSD          float64
	agentIn, agentOut int
}

// EstimateJudging is EstimateEach for a run that judges answers already
// made: its judge calls alone.
func EstimateJudging(cfg *config.Config, kind assay.Kind, samples iter.Seq[*store.Sample], conditions []assay.Condition, prices map[string]config.Price) Estimate {
	e := EstimateEach(cfg, kind, samples, conditions, prices)
	e.LiveUSD -= e.agentUSD
	e.BatchUSD -= e.agentUSD
	e.CostUSD -= e.agentUSD
	e.TokensIn -= e.agentIn
	e.TokensOut -= e.agentOut
	e.AgentCalls, e.agentUSD, e.agentIn, e.agentOut = 0, 0, 0, 0
	e.Unpriced = slices.DeleteFunc(e.Unpriced, func(m string) bool {
		return !slices.ContainsFunc(cfg.Panel(), func(j config.Judge) bool { return judgeModel(j) == m })
	})
	return e
}

// The guesses an estimate rests on.
const (
	charsPerToken     = 4
	messageOverhead   = 8   // role markers and framing of one chat message
	minAgentOutput    = 64  // tokens of the shortest answer we expect
	judgeInstructions = 700 // the rubric or arbiter instructions and answer schema
	judgeOutput       = 250 // scores, reasoning and claims
)

// EstimateRun forecasts a run of cfg over samples and conditions. It is a
// rough estimate. Call counts are exact unless calls fail, since the judge
// sample is the same deterministic choice the run makes; tokens are guessed:
// four characters a token; the agent reads the condition's system prompt and
// the sample's prompt and answers twice the reference's length (at least 64
// tokens, at most agent.max_tokens); a judge reads the question, reference and
// that answer plus about 700 tokens of instructions and writes about 250. MCP
// tool definitions, further tool-loop turns and retries are not counted.
func EstimateRun(cfg *config.Config, kind assay.Kind, samples []store.Sample, conditions []assay.Condition, prices map[string]config.Price) Estimate {
	return EstimateEach(cfg, kind, func(yield func(*store.Sample) bool) {
		for i := range samples {
			if !yield(&samples[i]) {
				return
			}
		}
	}, conditions, prices)
}

// EstimateEach is EstimateRun over samples read one at a time.
func EstimateEach(cfg *config.Config, kind assay.Kind, samples iter.Seq[*store.Sample], conditions []assay.Condition, prices map[string]config.Price) Estimate {
	var e Estimate
	judges := 0
	for _, ev := range cfg.EvaluatorsFor(kind) {
		if ev.UsesJudge() {
			judges++
		}
	}
	panel := cfg.Panel()
	perJudged := judges * max(cfg.JudgeRepetitions, 1) * max(len(panel), 1)
	models, conditions := agentModels(cfg, conditions)
	var agentIn, agentOut, judgeIn int
	for s := range samples {
		prompt := tokens(Prompt(cfg.Prompts, kind, s)) + messageOverhead
		answer := answerTokens(cfg.Agent.MaxTokens, s.Reference)
		judgeRead := tokens(s.Input) + tokens(judgeReference(kind, s)) + answer + judgeInstructions
		for _, c := range conditions {
			in := prompt + systemTokens(c.SystemPrompt)
			for rep := 1; rep <= max(cfg.Execution.NumRepetitions, 1); rep++ {
				e.AgentCalls++
				agentIn += in
				agentOut += answer
				if perJudged > 0 && judged(cfg.JudgeSampleRate, store.TaskKey{Condition: c.Name, Repetition: rep}, s.SampleID) {
					e.JudgeCalls += perJudged
					judgeIn += perJudged * judgeRead
				}
			}
		}
	}
	e.priceCalls(prices, models, panel, agentIn, agentOut, judgeIn)
	e.CostUSD = e.LiveUSD
	if cfg.Batch != nil && cfg.Batch.Judge {
		e.CostUSD = e.BatchUSD
	}
	return e
}

// agentModels is the models a run's agent answers with, and the conditions
// as answered: a run over several models answers every sample under every
// condition with each, its calls the models' in equal shares.
func agentModels(cfg *config.Config, conditions []assay.Condition) ([]string, []assay.Condition) {
	if len(cfg.Agent.Models) == 0 {
		return []string{cfg.Agent.Model}, conditions
	}
	var models []string
	for _, am := range cfg.Agent.Models {
		models = append(models, am.Model)
	}
	var expanded []assay.Condition
	for _, c := range conditions {
		for range models {
			expanded = append(expanded, c)
		}
	}
	return models, expanded
}

// priceCalls prices the estimate's calls, live and in a batch: the agent's
// in equal shares among its models, the judges' among the panel.
func (e *Estimate) priceCalls(prices map[string]config.Price, models []string, panel []config.Judge, agentIn, agentOut, judgeIn int) {
	judgeOut := e.JudgeCalls * judgeOutput
	e.TokensIn, e.TokensOut = agentIn+judgeIn, agentOut+judgeOut
	for _, model := range models {
		n := len(models)
		agent, _ := e.price(prices, model, e.AgentCalls/n, agentIn/n, agentOut/n)
		e.LiveUSD += agent
		e.BatchUSD += agent
		e.agentUSD += agent
	}
	e.agentIn, e.agentOut = agentIn, agentOut
	for _, j := range panel {
		n := len(panel)
		judge, discount := e.price(prices, judgeModel(j), e.JudgeCalls/n, judgeIn/n, judgeOut/n)
		e.LiveUSD += judge
		e.BatchUSD += judge * (1 - discount)
	}
}

// price is what calls to a model cost live, and the share of it a batch
// saves; a called model without a price is noted as unpriced.
func (e *Estimate) price(prices map[string]config.Price, model string, calls, in, out int) (float64, float64) {
	if calls == 0 {
		return 0, 0
	}
	p, _, ok := config.PriceFor(prices, model)
	if !ok {
		if !slices.Contains(e.Unpriced, model) {
			e.Unpriced = append(e.Unpriced, model)
			slices.Sort(e.Unpriced)
		}
		return 0, 0
	}
	return p.Cost(in, out, 0, 0), p.Discount()
}

func tokens(s string) int {
	return (utf8.RuneCountInString(s) + charsPerToken - 1) / charsPerToken
}

func systemTokens(prompt string) int {
	if prompt == "" {
		return 0
	}
	return tokens(prompt) + messageOverhead
}

// answerTokens guesses the length of the agent's answer from the reference's.
func answerTokens(maxTokens int, reference string) int {
	n := max(minAgentOutput, 2*tokens(reference))
	if maxTokens > 0 {
		n = min(n, maxTokens)
	}
	return n
}
