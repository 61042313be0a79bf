package config

import (
	"errors"
	"strings"
	"testing"
)

// base is a valid config; each case below edits it. Its line numbers are
// part of the expected messages.
const base = `name: t
dataset:
  path: q.jsonl
agent:
  type: openai
  model: m
judge:
  model: j
mcp_servers:
  docs:
    type: http
    url: http://localhost/mcp
conditions:
  baseline:
    system_prompt: hi
  with_docs:
    mcp_servers: [docs]
execution:
  num_repetitions: 2
  max_concurrent: 4
`

const baseConditions = `conditions:
  baseline:
    system_prompt: hi
  with_docs:
    mcp_servers: [docs]
`

func TestBaseIsValid(t *testing.T) {
	if _, err := Parse([]byte(base), "t.yaml", "/evals", noEnv(t)); err != nil {
		t.Fatal(err)
	}
}

func TestBadConfigs(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"unknown top-level key", "name: t\n", "name: t\nevaluator: [rubric]\n",
			[]string{"t.yaml:2: evaluator: unknown key (did you mean evaluators?)"}},
		{"unknown nested key", "num_repetitions: 2", "num_repetiton: 2",
			[]string{"t.yaml:19: execution.num_repetiton: unknown key (did you mean num_repetitions?)"}},
		{"unknown key inside a condition", "system_prompt: hi", "system_promt: hi",
			[]string{"t.yaml:15: conditions.baseline.system_promt: unknown key (did you mean system_prompt?)"}},
		{"unknown key with no near match", "name: t\n", "name: t\nfrobnicate: 1\n",
			[]string{"t.yaml:2: frobnicate: unknown key"}},
		{"wrong type integer", "max_concurrent: 4", "max_concurrent: five",
			[]string{`t.yaml:20: execution.max_concurrent: want an integer, got "five"`}},
		{"wrong type float for integer", "num_repetitions: 2", "num_repetitions: 2.5",
			[]string{`t.yaml:19: execution.num_repetitions: want an integer, got "2.5"`}},
		{"mapping for a string", "name: t", "name: {a: 1}",
			[]string{"t.yaml:1: name: want a string, got a mapping"}},
		{"scalar for a list", "mcp_servers: [docs]", "mcp_servers: docs",
			[]string{`t.yaml:17: conditions.with_docs.mcp_servers: want a list, got "docs"`}},
		{"yes is not a boolean", "mcp_servers: [docs]", "mcp_servers: [docs]\n    require_mcp_tool_use: yes",
			[]string{`t.yaml:18: conditions.with_docs.require_mcp_tool_use: want true or false, got "yes"`}},
		{"negative repetitions", "num_repetitions: 2", "num_repetitions: -1",
			[]string{"t.yaml:19: execution.num_repetitions: must be at least 1, got -1"}},
		{"a billion repetitions", "num_repetitions: 2", "num_repetitions: 1000000000",
			[]string{"t.yaml:19: execution.num_repetitions: must be at most 100, got 1000000000"}},
		{"concurrency past the bound", "max_concurrent: 4", "max_concurrent: 100000",
			[]string{"t.yaml:20: execution.max_concurrent: must be at most 200, got 100000"}},
		{"judge repetitions past the bound", "name: t\n", "name: t\njudge_repetitions: 21\n",
			[]string{"t.yaml:2: judge_repetitions: must be at most 20, got 21"}},
		{"a key where its variable's name belongs", "model: m", "model: m\n  api_key_env: sk-live-abc123def456",
			[]string{"t.yaml:7: agent.api_key_env: name the variable, not the key"}},
		{"a judge key where its variable's name belongs", "model: j", "model: j\n  api_key_env: sk-proj-1234567890",
			[]string{"t.yaml:9: judge.api_key_env: name the variable, not the key"}},
		{"zero concurrency", "max_concurrent: 4", "max_concurrent: 0",
			[]string{"t.yaml:20: execution.max_concurrent: must be at least 1, got 0"}},
		{"undefined mcp server", "mcp_servers: [docs]", "mcp_servers: [docs, graph]",
			[]string{`t.yaml:17: conditions.with_docs.mcp_servers[1]: undefined MCP server "graph" (defined: docs)`}},
		{"unset env var", "model: m", "model: ${AGENT_MODEL}",
			[]string{"t.yaml:6: agent.model: environment variable AGENT_MODEL is not set", "${AGENT_MODEL:-value}"}},
		{"bad evaluator", "name: t\n", "name: t\nevaluators: [rubric, fuzzy]\n",
			[]string{`t.yaml:2: evaluators[1]: unknown evaluator "fuzzy" (want one of rubric, arbiter, exact_match, numeric_match, code_execution; or an assertion: json_valid, or {KIND: …} for contains,`}},
		{"an assertion that needs its argument, written bare", "name: t\n", "name: t\nevaluators: [rubric, contains]\n",
			[]string{`t.yaml:2: evaluators[1]: the assertion contains needs an argument: write it as {contains: …}`}},
		{"sample rate above 1", "name: t\n", "name: t\njudge_sample_rate: 1.5\n",
			[]string{"t.yaml:2: judge_sample_rate: must be between 0 and 1, got 1.5"}},
		{"judge temperature above 2", "model: j", "model: j\n  temperature: 3",
			[]string{"t.yaml:9: judge.temperature: must be between 0 and 2, got 3"}},
		{"empty conditions", baseConditions, "conditions: {}\n",
			[]string{"t.yaml:13: conditions: at least one condition is required"}},
		{"no conditions", baseConditions, "",
			[]string{"t.yaml: conditions: at least one condition is required"}},
		{"condition name not a slug", "  baseline:", "  Base line:",
			[]string{"t.yaml:14: conditions.Base line: condition names may use only a-z, 0-9, _ and -"}},
		{"stdio without command", "type: http", "type: stdio",
			[]string{"t.yaml:10: mcp_servers.docs.command: required for type stdio", "url and headers are only for type http or sse"}},
		{"unknown transport", "type: http", "type: websocket",
			[]string{`t.yaml:11: mcp_servers.docs.type: unknown type "websocket" (want stdio, http or sse)`}},
		{"unknown agent type", "type: openai", "type: langchain",
			[]string{`t.yaml:5: agent.type: unknown agent type "langchain" (want openai, anthropic, claude_code (k-eval's claude_code_sdk) or command)`}},
		{"command agent without command", "type: openai", "type: command",
			[]string{"t.yaml:4: agent.command: required for agent type command"}},
		{"missing dataset path", "  path: q.jsonl\n", "  question_key: q\n",
			[]string{"t.yaml:2: dataset.path: required"}},
		{"bad dataset kind", "path: q.jsonl", "path: q.jsonl\n  kind: essay",
			[]string{`t.yaml:4: dataset.kind: unknown kind "essay" (want qa, mcq, math or code)`}},
		{"judge needed but missing", "judge:\n  model: j\n", "evaluators: [arbiter]\n",
			[]string{"judge.model: required by the rubric and arbiter evaluators"}},
		{"duplicate key", "name: t\n", "name: t\nname: u\n",
			[]string{"t.yaml:2: name: duplicate key"}},
		{"yaml syntax", "name: t", "name: [t",
			[]string{"t.yaml: yaml: line"}},
		{"several problems at once", "max_concurrent: 4", "max_concurrent: five\n  num_repetiton: 1",
			[]string{"t.yaml:20: execution.max_concurrent: want an integer", "t.yaml:21: execution.num_repetiton: unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.old) {
				t.Fatalf("base does not contain %q", tt.old)
			}
			yaml := strings.Replace(base, tt.old, tt.new, 1)
			_, err := Parse([]byte(yaml), "t.yaml", "/evals", func(string) string { return "" })
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain:\n%s", err, w)
				}
			}
			if strings.Contains(err.Error(), "sk-") {
				t.Errorf("the error repeats what may be a key: %v", err)
			}
		})
	}
}

func TestFieldErrorsCanBeInspected(t *testing.T) {
	yaml := strings.Replace(base, "num_repetitions: 2", "num_repetitions: 0", 1)
	_, err := Parse([]byte(yaml), "t.yaml", "/evals", noEnv(t))
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FieldError", err)
	}
	if fe.File != "t.yaml" || fe.Line != 19 || fe.Key != "execution.num_repetitions" {
		t.Errorf("FieldError = %+v", fe)
	}
}

func TestEmptyFile(t *testing.T) {
	_, err := Parse([]byte("# nothing yet\n"), "t.yaml", "/evals", noEnv(t))
	if err == nil || err.Error() != "t.yaml: the file is empty" {
		t.Errorf("err = %v", err)
	}
}
