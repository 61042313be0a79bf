package judge

import (
	"context"

	"assay/config"
	"assay/runner/llm"
)

// Pairwise asks a judge which of two answers to a question is the better,
// given its reference answer. A judge audit asks it of each pair twice, in
// both orders: a fair judge names the same answer both times.
type Pairwise struct {
	Client      *llm.Client
	MaxAttempts int
}

// Compare judges first against second; true when the judge says the first
// is the better.
func (p *Pairwise) Compare(ctx context.Context, question, reference, first, second string) (bool, *Judgement, error) {
	in := Input{Question: question, Reference: reference,
		Response: "Answer 1:\n" + first + "\n\nAnswer 2:\n" + second}
	v, err := judge(ctx, p.Client, p.MaxAttempts, &pairwiseForm, in)
	if err != nil {
		return false, v, err
	}
	m, _ := v.Metric("first_better")
	return m.Value == 1, v, nil
}

// pairwiseForm asks for the reasoning, then the choice.
var pairwiseForm = form{
	name:         "pairwise_verdict",
	instructions: pairwiseInstructions,
	fields: []field{
		{name: "reasoning", kind: text, about: "how the two answers compare with the golden answer and with each other"},
		{name: "first_better", kind: score, scale: config.ScalePass, about: "1 if Answer 1 is the better answer, 0 if Answer 2 is"},
	},
}

const pairwiseInstructions = `You are an impartial judge. The response below holds two answers to the same question, Answer 1 and Answer 2. Compare them with the reference (golden) answer and decide which one is the better answer: the more correct, complete and faithful to the golden answer.

The order of the two answers is arbitrary and says nothing of their quality. Length does not matter; meaning and correctness do. You must choose one.`
