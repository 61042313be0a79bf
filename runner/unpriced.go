package runner

import (
	"fmt"
	"slices"
	"strings"

	"assay"
	"assay/config"
)

// Unpriced names the models a run would call that have no price in
// prices, each with its part ("agent", "judge"): their calls would count
// as free. Claude Code reports its own cost, and a command agent names no
// model, so neither is listed.
func Unpriced(cfg *config.Config, kind assay.Kind, prices map[string]config.Price) []string {
	var out []string
	note := func(model, part string) {
		if _, _, ok := config.PriceFor(prices, model); !ok && model != "" {
			if s := fmt.Sprintf("%q (%s)", model, part); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	switch cfg.Agent.Type {
	case config.AgentOpenAI, config.AgentAnthropic:
		if len(cfg.Agent.Models) == 0 {
			note(cfg.Agent.Model, "agent")
		}
		for _, am := range cfg.Agent.Models {
			note(am.Model, "agent")
		}
	}
	if cfg.JudgeSampleRate > 0 && slices.ContainsFunc(cfg.EvaluatorsFor(kind), config.Evaluator.UsesJudge) {
		for _, j := range cfg.Panel() {
			note(judgeModel(j), "judge")
		}
	}
	return out
}

// checkPriced refuses a run with a budget that would call a model without
// a price, unless the run allows it: a budget cannot hold what it cannot
// count.
func checkPriced(spec *config.Config, kind assay.Kind) error {
	if spec.BudgetUSD <= 0 || spec.AllowUnpriced {
		return nil
	}
	if missing := Unpriced(spec, kind, spec.Prices); len(missing) > 0 {
		word := "model has"
		if len(missing) > 1 {
			word = "models have"
		}
		return assay.Errorf(assay.EINVALID, "budget_usd: the %s no price, so the budget cannot count its calls: %s. "+
			"Give each a price (prices: {MODEL: {input_per_mtok, output_per_mtok}} in the run file, or on the Settings page), "+
			"or set allow_unpriced: true to count their calls as free.", word, strings.Join(missing, ", "))
	}
	return nil
}
