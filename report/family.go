package report

import (
	"slices"
	"strings"

	"assay/config"
)

// SameFamily is a judge of the same model family as a model it judges:
// LLM judges tend to score their own family's answers higher (Panickssery
// et al. 2024, "LLM Evaluators Recognize and Favor Their Own Generations").
type SameFamily struct {
	Judge  string `json:"judge"`  // the judge's model
	Model  string `json:"model"`  // the agent's model it judges
	Family string `json:"family"` // claude, gpt, gemini, llama…
}

// families maps a model name's start (after any provider prefix) to its family.
var families = []struct{ prefix, family string }{
	{"claude", "claude"}, {"chatgpt", "gpt"}, {"gpt", "gpt"}, {"o1", "gpt"}, {"o3", "gpt"}, {"o4", "gpt"},
	{"gemini", "gemini"}, {"gemma", "gemini"}, {"llama", "llama"}, {"meta-llama", "llama"}, {"mistral", "mistral"},
	{"mixtral", "mistral"}, {"codestral", "mistral"}, {"qwen", "qwen"}, {"deepseek", "deepseek"}, {"grok", "grok"},
	{"command", "command"}, {"phi", "phi"},
}

// Family is a model's family by its name — "vertex_ai/claude-opus-4-5" and
// "claude-sonnet-4" are both claude — or "" when the name does not say.
func Family(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, f := range families {
		if strings.HasPrefix(m, f.prefix) {
			return f.family
		}
	}
	return ""
}

// SameFamilies lists each judge of cfg that is of the family of an agent
// model it judges. Claude Code without a model named is Claude.
func SameFamilies(cfg *config.Config) []SameFamily {
	if !slices.ContainsFunc(cfg.Evaluators, config.Evaluator.UsesJudge) {
		return nil
	}
	var models []string
	switch {
	case len(cfg.Agent.Models) > 0:
		for _, m := range cfg.Agent.Models {
			models = append(models, m.Model)
		}
	case cfg.Agent.Model != "":
		models = []string{cfg.Agent.Model}
	case cfg.Agent.Type == config.AgentClaudeCode || cfg.Agent.Type == config.AgentClaudeCodeSDK:
		models = []string{"claude"}
	}
	var out []SameFamily
	for _, j := range cfg.Panel() {
		jf := Family(j.Model)
		if jf == "" {
			continue
		}
		for _, m := range models {
			if Family(m) == jf {
				out = append(out, SameFamily{Judge: j.Model, Model: m, Family: jf})
			}
		}
	}
	return out
}
