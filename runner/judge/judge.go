// Package judge scores an agent's response against a golden answer with an
// LLM: Rubric (k-eval's three 1–5 metrics) and Arbiter (conduit-benchmark's
// 0–1 semantic and factuality). Both ask for structured output, fall back
// to a schema in the prompt for servers without it, validate every value
// and ask again, with the reason, when an answer is malformed.
package judge

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm"
)

// DefaultMaxAttempts bounds the answers asked for when they come back malformed.
const DefaultMaxAttempts = 3

// ErrInvalidAnswer is wrapped by the error of a judge whose every answer
// was malformed.
var ErrInvalidAnswer = errors.New("judge answer invalid")

// Input is what a judge sees of one result.
type Input struct {
	Question, Reference, Response string
}

// Metric is one named score with the judge's reasoning for it.
type Metric struct {
	Name      string
	Value     float64
	Reasoning string
}

// Judgement is a judge's assessment and what it cost. When Judge returns an
// error after the judge answered, the Judgement is returned too, without
// metrics, so the caller can still record Raw, tokens and attempts.
type Judgement struct {
	Metrics []Metric
	// UnverifiedClaims are claims of the response the golden answer does
	// not support (rubric only).
	UnverifiedClaims []string
	// Raw is the last answer exactly as the judge gave it.
	Raw                 string
	TokensIn, TokensOut int
	// CacheReadTokens and CacheWriteTokens are the part of TokensIn read
	// from and written to the provider's prompt cache (Anthropic).
	CacheReadTokens, CacheWriteTokens int
	// Latency sums the calls made.
	Latency time.Duration
	// Attempts counts chat calls, a call rejected for structured output included.
	Attempts int
	// Structured is false when the schema had to go in the prompt because
	// the server rejected response_format json_schema.
	Structured bool
	// BatchedCalls are the answers that came back in a batch, and
	// BatchedTokensIn and BatchedTokensOut their part of the tokens,
	// priced at the batch price.
	BatchedCalls                      int
	BatchedTokensIn, BatchedTokensOut int
}

// Metric returns the named metric and whether the judgement has it.
func (v *Judgement) Metric(name string) (Metric, bool) {
	for _, m := range v.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// judge runs the protocol of form f: ask, validate, ask again with the
// reason until an answer is valid or maxAttempts answers were malformed.
func judge(ctx context.Context, client *llm.Client, maxAttempts int, f *form, in Input) (*Judgement, error) {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	v := &Judgement{Structured: true}
	msgs := f.messages(in, true)
	var problem string
	for answers := 0; answers < maxAttempts; {
		resp, err := client.Chat(ctx, llm.Request{Messages: msgs, ResponseFormat: f.format(v.Structured)})
		v.Attempts++
		if err != nil {
			if v.Structured && rejectsStructured(err) {
				v.Structured = false
				msgs = f.messages(in, false)
				continue
			}
			return v, fmt.Errorf("judge: %w", err)
		}
		answers++
		v.add(resp)
		var metrics []Metric
		var claims []string
		if metrics, claims, problem = f.read(ctx, resp.Content, resp.FinishReason); problem == "" {
			v.Metrics, v.UnverifiedClaims = metrics, claims
			return v, nil
		}
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: resp.Raw},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: correction(problem)})
	}
	return v, fmt.Errorf("%w after %d attempts: %s", ErrInvalidAnswer, maxAttempts, problem)
}

// add counts one answer: its cost, and its text as the latest Raw.
func (v *Judgement) add(resp *llm.Response) {
	v.Raw = resp.Raw
	v.TokensIn += resp.TokensIn
	v.TokensOut += resp.TokensOut
	v.CacheReadTokens += resp.CacheReadTokens
	v.CacheWriteTokens += resp.CacheWriteTokens
	v.Latency += resp.Latency
	if resp.Batched {
		v.BatchedCalls++
		v.BatchedTokensIn += resp.TokensIn
		v.BatchedTokensOut += resp.TokensOut
	}
}

// rejectsStructured reports whether err is the server refusing the request
// as sent. Servers word their refusal of json_schema in many ways (400 or
// 422, naming response_format, json_schema, or only "invalid request"), so
// any such refusal of a structured request gets one try in the prompt; if
// the refusal was about something else, that try fails the same way.
func rejectsStructured(err error) bool {
	var e *llm.Error
	return errors.As(err, &e) && (e.StatusCode == 400 || e.StatusCode == 422)
}

// correction asks the judge to fix its last answer. Because temperature
// and seed are pinned, repeating the same request would likely repeat the
// same mistake; naming it gives the judge a different prompt to answer.
func correction(problem string) string {
	return "Your answer could not be used: " + problem +
		". Reply again with only the corrected JSON object, with every field present and valid."
}
