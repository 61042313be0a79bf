package runner_test

import (
	"context"
	"math"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A judge on an OpenAI-compatible API whose server says part of the
// prompt came from its cache has those tokens counted apart and priced at
// the model's cache rate, or at half the input price (OpenAI's smallest
// discount) when the price gives none; an answer without cached tokens
// costs the whole input price.
func TestOpenAICachedPrefixIsCountedAndPriced(t *testing.T) {
	judge := llmtest.Judge(map[string]any{"factual_adherence": 4, "completeness": 5, "helpfulness_and_clarity": 3})
	h := llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		r := judge(req)
		r.PromptTokens, r.CompletionTokens, r.CachedTokens = 1000, 100, 800
		return r
	}, func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "4", PromptTokens: 1000, CompletionTokens: 100}
	})
	for _, tc := range []struct {
		price      string
		judge, ans float64 // per million: input 10, output 20
	}{
		{"{input_per_mtok: 10, output_per_mtok: 20}", (200*10 + 800*5 + 100*20) / 1e6, (1000*10 + 100*20) / 1e6},
		{"{input_per_mtok: 10, output_per_mtok: 20, cache_read_per_mtok: 1}", (200*10 + 800*1 + 100*20) / 1e6, (1000*10 + 100*20) / 1e6},
	} {
		f := newFixture(t, h)
		run := f.launch(f.config(f.qaDataset(1), "prices: {judge-model: "+tc.price+", agent-model: "+tc.price+"}\n"))
		if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
			t.Fatalf("%s %v", status, err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		for _, r := range results {
			j := r.Judgements[0]
			if j.CacheReadTokens != 800 || math.Abs(j.CostUSD-tc.judge) > 1e-12 || r.CacheReadTokens != 0 || math.Abs(r.CostUSD-tc.ans) > 1e-12 {
				t.Errorf("%s: judgement %d cached, $%v (want 800, $%v); answer %d cached, $%v (want $%v)",
					tc.price, j.CacheReadTokens, j.CostUSD, tc.judge, r.CacheReadTokens, r.CostUSD, tc.ans)
			}
		}
	}
}
