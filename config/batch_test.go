package config

import (
	"strings"
	"testing"
	"time"
)

func TestBatchSettings(t *testing.T) {
	c, err := Parse([]byte(minimal+"batch: {judge: true, max_wait: 2h, size: 500}\nprices: {j: {input_per_mtok: 2, output_per_mtok: 8, batch_discount: 0.25}}\n"),
		"run.yaml", "/evals", noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	maxWait, gather, poll := c.Batch.Waits()
	if !c.Batch.Judge || c.Batch.Lines() != 500 || maxWait != 2*time.Hour || gather != 10*time.Second || poll != 30*time.Second {
		t.Errorf("batch %+v: waits %s %s %s", c.Batch, maxWait, gather, poll)
	}
	if d := c.Prices["j"].Discount(); d != 0.25 {
		t.Errorf("discount %v, want 0.25", d)
	}
	if d := (Price{}).Discount(); d != DefaultBatchDiscount {
		t.Errorf("a price without a discount saves %v, want %v", d, DefaultBatchDiscount)
	}
	if c, _ := Parse([]byte(minimal), "run.yaml", "/evals", noEnv(t)); c.Batch != nil {
		t.Errorf("a file without batch: sends batches: %+v", c.Batch)
	}
}

func TestBadBatchSettingsNamed(t *testing.T) {
	for _, tc := range []struct{ extra, key, want string }{
		{"batch: {judge: true, size: 60000}", "batch.size", "at most 50000"},
		{"batch: {judge: true, max_wait: soon}", "batch.max_wait", "not a duration"},
		{"batch: {judge: true, max_wait: 48h}", "batch.max_wait", "at most 24h"},
		{"batch: {judge: true, poll: 0s}", "batch.poll", "more than 0"},
		{"batch: {agent: true}", "batch.agent", "a command agent's are its own"},
		{"prices: {j: {input_per_mtok: 1, output_per_mtok: 1, batch_discount: 2}}", "prices.j.batch_discount", "between 0 and 1"},
	} {
		base := minimal
		if strings.Contains(tc.extra, "agent: true") {
			base = strings.Replace(minimal, "  type: openai\n  model: m\n", "  type: command\n  command: [/bin/cat]\n", 1)
		}
		_, err := Parse([]byte(base+tc.extra+"\n"), "run.yaml", "/evals", noEnv(t))
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %s: …%s", tc.extra, err, tc.key, tc.want)
		}
	}
	vertex := strings.Replace(minimal, "  model: j\n", "  model: vertex_ai/claude-sonnet-4-5\n", 1)
	_, err := Parse([]byte(vertex+"batch: {judge: true}\n"), "run.yaml", "/evals", func(string) string { return "k" })
	if err == nil || !strings.Contains(err.Error(), "batch.judge") || !strings.Contains(err.Error(), "Vertex AI") {
		t.Errorf("a judge on Vertex AI in batches: %v", err)
	}
	anthropic := strings.Replace(minimal, "  model: j\n", "  model: anthropic/claude-sonnet-4-5\n", 1)
	if _, err := Parse([]byte(anthropic+"batch: {judge: true}\n"), "run.yaml", "/evals", func(string) string { return "k" }); err != nil {
		t.Errorf("an Anthropic judge in batches: %v", err)
	}
}
