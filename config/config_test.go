package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"assay"
	"assay/internal/fixture"
)

// noEnv is a getenv for files that must not read the environment.
func noEnv(t *testing.T) func(string) string {
	return func(name string) string {
		t.Errorf("unexpected lookup of %s", name)
		return ""
	}
}

// kEval reads a k-eval run config as k-eval wrote it: the project's fixture
// under testdata/keval, or, for a name under "shared:", k-eval's own file in
// the conformance set.
func kEval(t *testing.T, name string) []byte {
	t.Helper()
	var data []byte
	if shared, ok := strings.CutPrefix(name, "shared:"); ok {
		data = fixture.ReadShared(t, "k-eval/"+shared)
	} else {
		data = fixture.Read(t, "keval/"+name)
	}
	return data
}

// kEvalWant is what a k-eval config with three conditions over two servers reads as.
type kEvalWant struct {
	name, dataset string
	conditions    []string
	servers       []assay.MCPServer // of the last condition
}

func TestKEvalConfigsLoad(t *testing.T) {
	search := assay.MCPServer{Name: "search", Transport: assay.TransportSSE, URL: "http://localhost:8080/sse",
		Headers: map[string]string{"Authorization": "Bearer ${SEARCH_API_KEY}"}}
	tests := map[string]kEvalWant{
		"run.yaml": {name: "ops-cli-context-eval", dataset: "/evals/golden.jsonl",
			conditions: []string{"baseline", "with_docs", "with_docs_and_search"},
			servers: []assay.MCPServer{{Name: "docs", Transport: assay.TransportStdio, Command: "python",
				Args: []string{"-m", "opsdocs.mcp"}}, search}},
		"shared:fixture_valid_config.yaml": {name: "kartograph-graph-context-eval", dataset: "/evals/questions.jsonl",
			conditions: []string{"baseline", "with_graph", "with_graph_and_search"},
			servers: []assay.MCPServer{{Name: "graph", Transport: assay.TransportStdio, Command: "python",
				Args: []string{"-m", "kartograph.mcp"}}, search}},
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) { checkKEvalConfig(t, kEval(t, file), want) })
	}
}

func checkKEvalConfig(t *testing.T, data []byte, want kEvalWant) {
	c, err := Parse(data, "run.yaml", "/evals", noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != want.name || c.Version != "1" {
		t.Errorf("name, version = %q, %q", c.Name, c.Version)
	}
	wantDataset := Dataset{Path: want.dataset, QuestionKey: "question", AnswerKey: "answer"}
	if c.Dataset != wantDataset {
		t.Errorf("dataset = %+v, want %+v", c.Dataset, wantDataset)
	}
	if c.Agent.Type != AgentClaudeCode || c.Agent.Model != "claude-sonnet-4-5" || c.Judge.Model != "vertex_ai/claude-opus-4-5" {
		t.Errorf("agent, judge = %+v, %+v", c.Agent, c.Judge)
	}
	wantExec := Execution{NumRepetitions: 3, MaxConcurrent: 5, Retry: Retry{MaxAttempts: 3, InitialBackoffSeconds: 1, BackoffMultiplier: 2}}
	if c.Execution != wantExec {
		t.Errorf("execution = %+v, want %+v", c.Execution, wantExec)
	}
	conds := c.Conditions()
	var names []string
	for _, cond := range conds {
		names = append(names, cond.Name)
	}
	if !reflect.DeepEqual(names, want.conditions) {
		t.Fatalf("conditions = %v, want %v (file order)", names, want.conditions)
	}
	if len(conds[0].MCPServers) != 0 || conds[0].RequireMCPToolUse {
		t.Errorf("baseline = %+v", conds[0])
	}
	last := conds[2]
	if !reflect.DeepEqual(last.MCPServers, want.servers) {
		t.Errorf("servers = %+v\nwant      %+v", last.MCPServers, want.servers)
	}
	if !last.RequireMCPToolUse || !last.RequireMCPToolSuccess || !strings.HasPrefix(last.SystemPrompt, "You have") {
		t.Errorf("last condition = %+v", last)
	}
}

func TestKEvalOneServerConfigsLoad(t *testing.T) {
	for file, want := range map[string][2]string{
		"one_question.yaml":             {"ops_docs", "http://127.0.0.1:8001/mcp"},
		"shared:pre_test1-ask_sre.yaml": {"ask_sre", "http://127.0.0.1:8001/mcp"},
	} {
		t.Run(file, func(t *testing.T) {
			c, err := Parse(kEval(t, file), "run.yaml", "/evals", noEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			conds := c.Conditions()
			if len(conds) != 1 || conds[0].Name != want[0] || len(conds[0].MCPServers) != 1 ||
				conds[0].MCPServers[0].URL != want[1] || conds[0].MCPServers[0].Transport != assay.TransportHTTP {
				t.Errorf("conditions = %+v", conds)
			}
			if c.Execution.NumRepetitions != 1 || c.Execution.Retry.MaxAttempts != 2 {
				t.Errorf("execution = %+v", c.Execution)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse([]byte(minimal), "run.yaml", "/evals", noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"name from file name", c.Name, "run"},
		{"num_repetitions", c.Execution.NumRepetitions, 3},
		{"max_concurrent", c.Execution.MaxConcurrent, 5},
		{"retry", c.Execution.Retry, Retry{MaxAttempts: 3, InitialBackoffSeconds: 1, BackoffMultiplier: 2}},
		{"max_turns", c.Agent.MaxTurns, 20},
		{"agent temperature unset", c.Agent.Temperature, (*float64)(nil)},
		{"agent api_key_env", c.Agent.APIKeyEnv, "OPENAI_API_KEY"},
		{"judge seed", c.Judge.Seed, 42},
		{"judge temperature", c.Judge.Temperature, 0.0},
		{"judge_sample_rate", c.JudgeSampleRate, 1.0},
		{"judge_repetitions", c.JudgeRepetitions, 1},
		{"code timeout", c.CodeExecution.TimeoutSeconds, 10},
		{"unsandboxed", c.CodeExecution.Unsandboxed, false},
		{"evaluators for qa", c.EvaluatorsFor(assay.KindQA), []Evaluator{EvalRubric}},
		{"evaluators for mcq", c.EvaluatorsFor(assay.KindMCQ), []Evaluator{EvalExactMatch}},
		{"evaluators for math", c.EvaluatorsFor(assay.KindMath), []Evaluator{EvalNumericMatch}},
		{"evaluators for code", c.EvaluatorsFor(assay.KindCode), []Evaluator{EvalCodeExecution}},
	}
	for _, tt := range checks {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}

func TestExplicitValuesOverrideDefaults(t *testing.T) {
	yaml := minimal + `
evaluators: [arbiter, exact_match]
judge_sample_rate: 0
judge_repetitions: 2
budget_usd: 12.5
prices:
  gpt-4.1: {input_per_mtok: 2, output_per_mtok: 8}
code_execution: {timeout_seconds: 30, unsandboxed: true}
prompts: {math: "Solve: {{.Input}}"}
`
	yaml = strings.Replace(yaml, "  model: m\n", "  model: m\n  temperature: 0.7\n  base_url: http://localhost:11434/v1\n", 1)
	yaml = strings.Replace(yaml, "  model: j\n", "  model: j\n  seed: 0\n  temperature: 0.2\n", 1)
	c, err := Parse([]byte(yaml), "run.yaml", "/evals", noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.Temperature == nil || *c.Agent.Temperature != 0.7 || c.Agent.APIKeyEnv != "" {
		t.Errorf("agent = %+v: want temperature 0.7 and no key assumed for a base_url", c.Agent)
	}
	if c.Judge.Seed != 0 || c.Judge.Temperature != 0.2 || c.JudgeSampleRate != 0 || c.JudgeRepetitions != 2 {
		t.Errorf("judge = %+v, rate %v, reps %d", c.Judge, c.JudgeSampleRate, c.JudgeRepetitions)
	}
	if got := c.EvaluatorsFor(assay.KindMath); !reflect.DeepEqual(got, []Evaluator{EvalArbiter, EvalExactMatch}) {
		t.Errorf("evaluators = %v", got)
	}
	wantPrices := []assay.Price{{Model: "gpt-4.1", InputPerMTok: 2, OutputPerMTok: 8}}
	if got := c.PriceList(); !reflect.DeepEqual(got, wantPrices) || c.BudgetUSD != 12.5 {
		t.Errorf("prices = %+v, budget %v", got, c.BudgetUSD)
	}
	if c.CodeExecution != (CodeExecution{TimeoutSeconds: 30, Unsandboxed: true}) || c.Prompts.Math != "Solve: {{.Input}}" {
		t.Errorf("code_execution = %+v, prompts = %+v", c.CodeExecution, c.Prompts)
	}
}

func TestRelativePaths(t *testing.T) {
	tests := []struct {
		name, dataset, command string
		wantDataset, wantCmd   string
	}{
		{"relative", "data/q.jsonl", "./bin/server", "/evals/data/q.jsonl", "/evals/bin/server"},
		{"parent", "../q.jsonl", "tools/mcp.py", "/q.jsonl", "/evals/tools/mcp.py"},
		{"absolute", "/data/q.jsonl", "/usr/bin/server", "/data/q.jsonl", "/usr/bin/server"},
		{"on PATH", "q.jsonl", "npx", "/evals/q.jsonl", "npx"},
		{"reference kept for run start", "q.jsonl", "${TOOLS}/server", "/evals/q.jsonl", "${TOOLS}/server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := strings.Replace(minimal, "path: q.jsonl", "path: "+tt.dataset, 1) + `
mcp_servers:
  tool: {type: stdio, command: "` + tt.command + `"}
`
			c, err := Parse([]byte(yaml), "run.yaml", "/evals", noEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			if c.Dataset.Path != tt.wantDataset || c.MCPServers[0].Command != tt.wantCmd {
				t.Errorf("dataset, command = %q, %q; want %q, %q", c.Dataset.Path, c.MCPServers[0].Command, tt.wantDataset, tt.wantCmd)
			}
		})
	}
}

func TestLoadResolvesAgainstTheFilesFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nightly.yaml")
	if err := os.WriteFile(path, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != dir || c.Dataset.Path != filepath.Join(dir, "q.jsonl") || c.Name != "nightly" {
		t.Errorf("dir, dataset, name = %q, %q, %q", c.Dir, c.Dataset.Path, c.Name)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), noEnv(t)); err == nil || !strings.HasPrefix(err.Error(), "read config: ") {
		t.Errorf("missing file: err = %v", err)
	}
}

// minimal is the smallest valid config.
const minimal = `dataset:
  path: q.jsonl
agent:
  type: openai
  model: m
judge:
  model: j
conditions:
  baseline:
    system_prompt: Answer.
`

func TestCommandAgentFoundBesideTheFile(t *testing.T) {
	for _, tt := range []struct{ program, want string }{
		{"./agents/my-agent.sh", "/evals/agents/my-agent.sh"},
		{"claude", "claude"},
		{"/usr/local/bin/agent", "/usr/local/bin/agent"},
	} {
		yaml := strings.Replace(minimal, "type: openai\n  model: m", `type: command
  command: ["`+tt.program+`", "-p", "{query}"]`, 1)
		c, err := Parse([]byte(yaml), "run.yaml", "/evals", noEnv(t))
		if err != nil {
			t.Fatal(err)
		}
		if c.Agent.Command[0] != tt.want || c.Agent.Command[2] != "{query}" {
			t.Errorf("%s: command %q, want %q first", tt.program, c.Agent.Command, tt.want)
		}
		snap, _ := c.Redacted()
		if !strings.Contains(string(snap), `"`+tt.want+`"`) {
			t.Errorf("%s: the run's snapshot should keep the resolved program: %s", tt.program, snap)
		}
	}
}
