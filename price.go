package assay

import "time"

// Price is what a model costs per million tokens, in USD. A cache rate of
// 0 means the usual ratio to the input price.
type Price struct {
	Model             string
	InputPerMTok      float64
	OutputPerMTok     float64
	CacheReadPerMTok  float64
	CacheWritePerMTok float64
	UpdatedAt         time.Time
}

// Cost is what tokens cost at a price, in USD.
func (p Price) Cost(tokensIn, tokensOut int) float64 {
	return (float64(tokensIn)*p.InputPerMTok + float64(tokensOut)*p.OutputPerMTok) / 1e6
}
