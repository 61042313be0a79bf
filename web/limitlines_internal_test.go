package web

import (
	"strings"
	"testing"
	"time"

	"assay/runner/llm"
)

// The live page says an endpoint is paced or held, and until when.
func TestLimitLinesSayUntilWhen(t *testing.T) {
	soon := time.Now().Add(41 * time.Second)
	lines := limitLines([]llm.LimitState{
		{Endpoint: "api.openai.com", Limit: 1, Ceiling: 10, Paced: true, Until: soon},
		{Endpoint: "api.anthropic.com", Limit: 10, Ceiling: 10, Held: true, Until: soon},
	}, nil)
	clock := soon.Local().Format("15:04:05")
	if len(lines) != 2 || !strings.Contains(lines[0], "paced to its rate limit: the next call at "+clock) ||
		!strings.Contains(lines[1], "held by the provider (Retry-After, or no tokens left) until "+clock) {
		t.Errorf("limit lines: %q", lines)
	}
}
