package judge

import (
	"context"

	"assay/config"
	"assay/runner/llm"
)

// Arbiter is conduit-benchmark's judge for free-form answers: semantic
// agreement and factuality, each 0–1 with its reasoning, and their mean.
type Arbiter struct {
	// Client should pin temperature (0) and a seed; it is the judge model.
	Client *llm.Client
	// MaxAttempts bounds the answers asked for when they come back
	// malformed; 0 means DefaultMaxAttempts.
	MaxAttempts int
}

// Judge scores in.Response against in.Reference. Metrics are named
// semantic, factuality and overall (the mean of the two).
func (a *Arbiter) Judge(ctx context.Context, in Input) (*Judgement, error) {
	return judge(ctx, a.Client, a.MaxAttempts, &arbiterForm, in)
}

// arbiterForm asks for each reasoning before its score.
var arbiterForm = form{
	name:         "arbiter_verdict",
	instructions: arbiterInstructions,
	fields: []field{
		{name: "semantic_reasoning", kind: text, about: "how the meaning of the response compares with the golden answer"},
		{name: "semantic", kind: score, scale: config.ScaleUnit, about: "semantic agreement with the golden answer, a number from 0 to 1"},
		{name: "factuality_reasoning", kind: text, about: "which claims of the response are right or wrong given the golden answer"},
		{name: "factuality", kind: score, scale: config.ScaleUnit, about: "factual correctness given the golden answer, a number from 0 to 1"},
	},
	derive: withOverall,
}

// withOverall appends overall, the mean of the metrics.
func withOverall(metrics []Metric) []Metric {
	sum := 0.0
	for _, m := range metrics {
		sum += m.Value
	}
	overall := Metric{Name: "overall", Value: sum / float64(len(metrics)),
		Reasoning: "mean of semantic and factuality"}
	return append(metrics, overall)
}

// arbiterInstructions is the judge's system prompt, before the output fields.
const arbiterInstructions = `You are an impartial arbiter. You compare a model's free-form response to a question with a reference (golden) answer and score it on two metrics, each a number from 0 to 1.

The golden answer is the ground truth. Judge only the response; do not answer the question yourself. Wording, order and length do not matter; meaning and correctness do. Relevant extra detail that does not contradict the golden answer is not a fault.

## Semantic agreement (semantic)
How closely does the meaning of the response match the golden answer?
1.0 - Says the same thing, possibly in other words.
0.75 - Same conclusion, with a minor point missing or blurred.
0.5 - Partly the same: the central point matches but important parts differ or are missing.
0.25 - Only loosely related to the golden answer.
0.0 - Unrelated, opposite, or no answer.

## Factuality (factuality)
How correct are the response's factual claims, taking the golden answer as true?
1.0 - Every claim is correct.
0.75 - A minor claim is wrong or imprecise.
0.5 - An important claim is wrong, but the central one is right.
0.25 - The central claim is wrong, though some others are right.
0.0 - Mostly or entirely wrong.

Values between the anchors are allowed.`
