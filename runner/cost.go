package runner

import (
	"assay"
	"assay/config"
)

// prices is a run's price table, by model.
type prices map[string]config.Price

// cost is what a call of model cost (0 for a model without a price), and
// whether the table priced it.
func (p prices) cost(model string, tokensIn, tokensOut, cacheRead, cacheWrite int) (float64, bool) {
	price, _, ok := config.PriceFor(p, model)
	if price.CacheReadPerMTok == 0 && !config.AnthropicModel(model) {
		// OpenAI takes 50% to 90% off a cached prefix, by model: without
		// the model's own rate, the smallest discount, so as never to
		// count a budget short.
		price.CacheReadPerMTok = price.InputPerMTok * config.OpenAICacheReadRatio
	}
	return price.Cost(tokensIn, tokensOut, cacheRead, cacheWrite), ok
}

// batchSaving is what calls of model sent in a batch saved: the tokens'
// price times the model's batch discount.
func (p prices) batchSaving(model string, tokensIn, tokensOut int) float64 {
	price, _, ok := config.PriceFor(p, model)
	if !ok {
		return 0
	}
	return price.Cost(tokensIn, tokensOut, 0, 0) * price.Discount()
}

// PriceTable merges the stored price table with a config's own prices,
// which win: the table a run freezes, and the one an estimate uses.
func PriceTable(stored []assay.Price, cfg map[string]config.Price) map[string]config.Price {
	out := map[string]config.Price{}
	for _, p := range stored {
		out[p.Model] = config.Price{
			InputPerMTok:      p.InputPerMTok,
			OutputPerMTok:     p.OutputPerMTok,
			CacheReadPerMTok:  p.CacheReadPerMTok,
			CacheWritePerMTok: p.CacheWritePerMTok,
		}
	}
	for m, p := range cfg {
		out[m] = p
	}
	return out
}
