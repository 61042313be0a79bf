package runner

import (
	"sort"

	"assay/runner/config"
	"assay/store"
)

// prices is a run's price table, by model.
type prices map[string]config.Price

func (p prices) cost(model string, tokensIn, tokensOut int) float64 {
	pr, ok := p[model]
	if !ok {
		return 0
	}
	return (float64(tokensIn)*pr.InputPerMTok + float64(tokensOut)*pr.OutputPerMTok) / 1e6
}

// snapshotPrices merges the stored price table with the config's own prices,
// which win; the result is frozen into the run.
func snapshotPrices(stored []store.Price, cfg map[string]config.Price) map[string]config.Price {
	out := map[string]config.Price{}
	for _, p := range stored {
		out[p.Model] = config.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
	}
	for m, p := range cfg {
		out[m] = p
	}
	return out
}

// unpriced lists the models of a run that have no price.
func unpriced(cfg *config.Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range []string{cfg.Agent.Model, cfg.Judge.Model} {
		if _, ok := cfg.Prices[m]; !ok && m != "" && !seen[m] {
			out = append(out, m)
			seen[m] = true
		}
	}
	sort.Strings(out)
	return out
}
