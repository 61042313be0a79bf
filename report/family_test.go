package report

import (
	"testing"

	"assay/config"
)

func TestFamily(t *testing.T) {
	for model, want := range map[string]string{
		"vertex_ai/claude-opus-4-5": "claude", "anthropic/claude-3-5-sonnet": "claude", "claude-sonnet-4": "claude",
		"gpt-4o": "gpt", "openai/gpt-4.1-mini": "gpt", "o3-mini": "gpt", "gemini-2.5-pro": "gemini",
		"vertex_ai/gemini-2.0-flash": "gemini", "meta-llama/Llama-3.1-8B-Instruct": "llama", "Qwen2.5-72B": "qwen",
		"judge-model": "", "": "",
	} {
		if got := Family(model); got != want {
			t.Errorf("Family(%q) = %q, want %q", model, got, want)
		}
	}
}

// A judge is flagged beside each agent model of its family, and only when
// some evaluator asks it.
func TestSameFamilies(t *testing.T) {
	cfg := &config.Config{Agent: config.Agent{Type: config.AgentOpenAI, Model: "claude-sonnet-4"},
		Judge: config.Judge{Model: "vertex_ai/claude-opus-4-5"}, Evaluators: []config.Evaluator{config.EvalRubric}}
	if got := SameFamilies(cfg); len(got) != 1 || got[0].Family != "claude" || got[0].Model != "claude-sonnet-4" {
		t.Errorf("claude judging claude: %+v", got)
	}
	cfg.Evaluators = []config.Evaluator{config.EvalExactMatch}
	if got := SameFamilies(cfg); len(got) != 0 {
		t.Errorf("no evaluator asks the judge: %+v", got)
	}
	cfg.Evaluators = []config.Evaluator{config.EvalArbiter}
	cfg.Agent = config.Agent{Type: config.AgentOpenAI, Models: []config.AgentModel{{Name: "a", Model: "gpt-4o"}, {Name: "b", Model: "gemini-2.5-pro"}}}
	cfg.Judges = []config.Judge{{Name: "one", Model: "gpt-4.1"}, {Name: "two", Model: "claude-opus-4-5"}}
	if got := SameFamilies(cfg); len(got) != 1 || got[0].Judge != "gpt-4.1" || got[0].Model != "gpt-4o" {
		t.Errorf("a panel over two models: %+v", got)
	}
	cfg.Agent, cfg.Judges = config.Agent{Type: config.AgentClaudeCode}, nil
	cfg.Judge.Model = "anthropic/claude-opus-4-5"
	if got := SameFamilies(cfg); len(got) != 1 || got[0].Family != "claude" {
		t.Errorf("Claude Code judged by Claude: %+v", got)
	}
}
