package runner_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"assay/config"
	files "assay/internal/fixture"
	"assay/store"
)

// A command agent printing Claude Code's captured stream-json: the dated
// model it names is priced by its undated name, its cache tokens at the
// cache rates — which together give what Claude Code itself reported — and
// without a price the cost it reported is used, and said so.
func TestClaudeCodeAnswersArePricedRight(t *testing.T) {
	const reported = 0.017429999999999998
	cases := []struct {
		name, prices string
		want         float64
		source       store.CostSource
	}{
		{"priced by the undated name", "prices: {claude-sonnet-4-5: {input_per_mtok: 3, output_per_mtok: 15}}", 0.01743, store.CostFromPrices},
		{"no price: the agent's own figure", "", reported, store.CostFromAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, rubricJudge())
			yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: command, command: [cat, %q]}
judge: {model: judge-model, base_url: %q}
conditions: {baseline: {}}
execution: {num_repetitions: 1}
%s
`, f.qaDataset(1), files.Path("claude/mcp-stream.jsonl"), f.srv.URL, tc.prices)
			cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := f.launch(cfg)
			if st, err := f.m.Execute(context.Background(), run.ID); err != nil || st != store.RunCompleted {
				t.Fatalf("%s %v", st, err)
			}
			r := results(t, f.db, run.ID)[0]
			if r.Model != "claude-sonnet-4-5-20250929" || r.CacheReadTokens != 3000 || r.CacheWriteTokens != 3000 || r.TokensIn != 7500 ||
				math.Abs(r.CostUSD-tc.want) > 1e-12 || r.CostSource != tc.source {
				t.Errorf("result: model %q, tokens %d (cache %d read, %d written), cost %v from %q; want %v from %q",
					r.Model, r.TokensIn, r.CacheReadTokens, r.CacheWriteTokens, r.CostUSD, r.CostSource, tc.want, tc.source)
			}
			if r.Turns != 2 {
				t.Errorf("result: %d turns, want Claude Code's num_turns, 2", r.Turns)
			}
		})
	}
}
