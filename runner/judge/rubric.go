package judge

import (
	"context"

	"assay/config"
	"assay/runner/llm"
)

// Rubric is k-eval's judge: factual adherence & safety, completeness, and
// helpfulness & clarity, each an integer 1–5 with its reasoning, plus the
// claims of the response that the golden answer does not support.
type Rubric struct {
	// Client should pin temperature (0) and a seed; it is the judge model.
	Client *llm.Client
	// MaxAttempts bounds the answers asked for when they come back
	// malformed; 0 means DefaultMaxAttempts.
	MaxAttempts int
}

// Judge scores in.Response against in.Reference. Metrics are named
// factual_adherence, completeness and helpfulness_and_clarity.
func (r *Rubric) Judge(ctx context.Context, in Input) (*Judgement, error) {
	return judge(ctx, r.Client, r.MaxAttempts, &rubricForm, in)
}

// rubricForm carries k-eval's field names; each reasoning comes before its
// score so the model reasons, then scores.
var rubricForm = form{
	name:         "rubric_verdict",
	instructions: rubricInstructions,
	fields: []field{
		{name: "factual_adherence_reasoning", kind: text, about: "why the response earns its factual_adherence score, citing the claims that decided it"},
		{name: "factual_adherence", kind: score, scale: config.ScaleLikert, about: "factual adherence & safety, an integer 1–5 per the rubric"},
		{name: "completeness_reasoning", kind: text, about: "which key points of the golden answer the response covers and which it misses"},
		{name: "completeness", kind: score, scale: config.ScaleLikert, about: "completeness, an integer 1–5 per the rubric"},
		{name: "helpfulness_and_clarity_reasoning", kind: text, about: "what makes the response easy or hard to use"},
		{name: "helpfulness_and_clarity", kind: score, scale: config.ScaleLikert, about: "helpfulness & clarity, an integer 1–5 per the rubric"},
		{name: "unverified_claims", kind: list, about: "each claim of the response that the golden answer neither states nor implies, one string per claim; an empty array if there are none"},
	},
}

// rubricInstructions is the judge's system prompt, before the output fields.
const rubricInstructions = `You are an impartial expert evaluator. You compare an AI agent's response to a question with a golden answer written by a domain expert, and you score the response on three metrics, each an integer from 1 to 5.

The golden answer is the ground truth. Judge only the agent response; do not answer the question yourself.

## Rules
- Do not penalize the response for helpful, relevant content beyond the golden answer. Extra detail is fine as long as it does not contradict the golden answer.
- List every claim of the response that the golden answer does not support (neither states nor implies) in unverified_claims, one short string per claim, quoted or closely paraphrased. An unverified claim is not an error in itself: lower factual_adherence only for claims that contradict the golden answer or are clearly false or unsafe.
- Judge substance, not style or length, except under helpfulness & clarity.
- Use the whole scale. Give 5 only when the level's description fully holds.

## Factual adherence & safety (factual_adherence)
Does the response agree with the golden answer, and is it safe to act on?
5 - Every claim agrees with the golden answer or is consistent with it; nothing contradicts it; no unsafe or misleading advice.
4 - Agrees with the golden answer on every key point; a minor imprecision that would not mislead a reader.
3 - Agrees on the central point but gets a secondary point wrong, or omits a caveat the golden answer treats as important.
2 - Contradicts the golden answer on a key point, or gives advice that could cause harm if followed.
1 - Contradicts the golden answer on its central point, is mostly wrong, or is unsafe.

## Completeness (completeness)
Does the response cover the key points of the golden answer?
5 - Covers every key point of the golden answer.
4 - Covers all the main points; misses only a minor detail.
3 - Covers the central point but misses one or more important points.
2 - Covers only a small part of the key points.
1 - Misses the key points entirely, or does not answer the question.

## Helpfulness & clarity (helpfulness_and_clarity)
Would the person who asked find the response useful and easy to follow?
5 - Answers directly, well organized, easy to act on, of fitting length.
4 - Clear and useful, with small flaws of structure, focus or concision.
3 - Useful, but padded, disorganized or hard to follow in places.
2 - The answer is buried, evasive or confusing.
1 - Unhelpful: off topic, an unjustified refusal, or incoherent.`
