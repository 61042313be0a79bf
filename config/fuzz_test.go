package config

import (
	"encoding/json"
	"testing"
)

// FuzzParse feeds any text to the run-file decoder. It must not panic or
// hang; a file it accepts validates without panicking and survives the
// stored form (JSON) that a run keeps.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\ndataset: {path: q.jsonl}\nagent: {type: openai, model: m}\njudge: {model: j}\nconditions: {a: {}}\n"))
	f.Add([]byte("agent:\n  type: claude_code_sdk\n  model: claude-sonnet-4-5\nmcp_servers:\n  s: {type: http, url: \"http://127.0.0.1:8001/mcp\"}\nconditions:\n  c: {mcp_servers: [s], require_mcp_tool_use: true}\n"))
	f.Add([]byte("execution: {num_repetitions: 3, retry: {max_attempts: 2}}\nprices: {m: {input_per_mtok: 1, output_per_mtok: 2}}\n"))
	f.Add([]byte("a: &x [*x, *x]\nb: ${HOME:-d}\n"))
	f.Add([]byte("conditions:\n  a: {system_prompt: \"${UNSET}\"}\n  a: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "run.yaml", "/evals", func(string) string { return "" })
		if err != nil {
			return
		}
		_ = c.Validate()
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("an accepted config does not encode: %v", err)
		}
		if _, err := Stored(raw); err != nil {
			t.Fatalf("a run's stored config does not read back: %v\n%s", err, raw)
		}
	})
}
