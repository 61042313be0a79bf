package config

import (
	"strings"
	"testing"
)

func TestJudgeProvider(t *testing.T) {
	for _, tc := range []struct {
		judge    Judge
		provider Provider
		model    string
		err      string
	}{
		{Judge{Model: "gpt-4o"}, ProviderOpenAI, "gpt-4o", ""},
		{Judge{Model: "openai/gpt-4o"}, ProviderOpenAI, "gpt-4o", ""},
		{Judge{Model: "anthropic/claude-opus-4-5"}, ProviderAnthropic, "claude-opus-4-5", ""},
		{Judge{Type: ProviderAnthropic, Model: "claude-opus-4-5"}, ProviderAnthropic, "claude-opus-4-5", ""},
		// Vertex AI as LiteLLM spells it; a base URL replaces its address only.
		{Judge{Model: "vertex_ai/claude-opus-4-5"}, ProviderVertex, "claude-opus-4-5", ""},
		{Judge{Model: "vertex_ai/gemini-2.5-pro", BaseURL: "http://127.0.0.1:9000"}, ProviderVertex, "gemini-2.5-pro", ""},
		{Judge{Model: "anthropic/claude-opus-4-5", BaseURL: "http://127.0.0.1:9000"}, ProviderAnthropic, "claude-opus-4-5", ""},
		// Under type openai the name goes as written: a LiteLLM proxy knows it.
		{Judge{Type: ProviderOpenAI, Model: "vertex_ai/claude-opus-4-5", BaseURL: "http://localhost:4000/v1"}, ProviderOpenAI, "vertex_ai/claude-opus-4-5", ""},
		{Judge{Model: "openai/gpt-4o", BaseURL: "http://localhost:4000/v1"}, ProviderOpenAI, "openai/gpt-4o", ""},
		{Judge{Model: "meta-llama/Llama-3.3-70B-Instruct"}, ProviderOpenAI, "meta-llama/Llama-3.3-70B-Instruct", ""},
		{Judge{Model: "bedrock/anthropic.claude-3"}, "", "", `judge.model "bedrock/anthropic.claude-3": assay does not reach bedrock directly. Point judge.base_url at an OpenAI-compatible proxy`},
		{Judge{Model: "bedrock/anthropic.claude-3"}, "", "", "or, for a Claude model, use judge.type: anthropic"},
		{Judge{Type: "gemini", Model: "x"}, "", "", `judge.type: unknown provider "gemini"`},
	} {
		p, m, err := tc.judge.Resolve()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc.judge, err, tc.err)
			}
			continue
		}
		if err != nil || p != tc.provider || m != tc.model {
			t.Errorf("%+v: %q %q %v, want %q %q", tc.judge, p, m, err, tc.provider, tc.model)
		}
	}
}

func TestAnthropicKeyIsTheDefault(t *testing.T) {
	c, err := Parse([]byte(`name: x
dataset: {path: q.jsonl}
agent: {type: anthropic, model: claude-sonnet-4-5}
judge: {model: anthropic/claude-opus-4-5}
conditions: {a: {}}
`), "run.yaml", "/evals", noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.APIKeyEnv != "ANTHROPIC_API_KEY" || c.Judge.APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Errorf("key variables %q, %q; want ANTHROPIC_API_KEY for both", c.Agent.APIKeyEnv, c.Judge.APIKeyEnv)
	}
}

func TestPriceForNamesWithAProvider(t *testing.T) {
	prices := map[string]Price{"claude-opus-4-5": {InputPerMTok: 5, OutputPerMTok: 25}, "gpt-4o": {InputPerMTok: 2.5, OutputPerMTok: 10}}
	for model, want := range map[string]string{
		"anthropic/claude-opus-4-5":         "claude-opus-4-5",
		"claude-opus-4-5-20251101":          "claude-opus-4-5",
		"openai/gpt-4o-2024-08-06":          "gpt-4o",
		"vertex_ai/claude-opus-4-5":         "",
		"meta-llama/Llama-3.3-70B-Instruct": "",
	} {
		_, key, ok := PriceFor(prices, model)
		if key != want || ok != (want != "") {
			t.Errorf("PriceFor(%q) = %q, %v; want %q", model, key, ok, want)
		}
	}
}
