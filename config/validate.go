package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"assay"
)

// slug is what a condition name may be: it appears in URLs, tables and files.
var slug = regexp.MustCompile(`^[a-z0-9_-]+$`)

// envName is what the name of an environment variable may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsEnvName reports whether s can name an environment variable. An
// api_key_env that cannot is most likely the key itself, written where its
// variable's name belongs.
func IsEnvName(s string) bool { return envName.MatchString(s) }

// keyEnv checks an api_key_env value without ever repeating it: it may be a key.
func (k *checker) keyEnv(key, value string) {
	if value != "" && !IsEnvName(value) {
		k.fail(key, "name the variable, not the key: the value is not an environment variable name "+
			"(letters, digits and _, such as OPENAI_API_KEY), and is not shown here in case it is the key itself")
	}
}

// checker collects the problems of a decoded config, placing each on the
// line of its key or, for a missing key, of the nearest parent in the file.
type checker struct {
	file  string
	lines map[string]int
	errs  []error
}

// check returns every problem of c, which was decoded without error.
func check(c *Config, filename string, lines map[string]int) []error {
	k := &checker{file: filename, lines: lines}
	k.dataset(c.Dataset)
	k.conditions(c)
	k.settings(c)
	return k.errs
}

// Validate checks a config that was not read from a file — the run form's,
// or one a program builds — by the same rules as a run file: every setting
// but the dataset's file and the conditions, which such a run takes from the
// database. Its error joins one *FieldError per problem.
func (c *Config) Validate() error {
	k := &checker{}
	k.settings(c)
	return joinSorted(k.errs)
}

// settings checks what every config has, however it was made.
func (k *checker) settings(c *Config) {
	k.rubrics(c)
	k.agent(c.Agent)
	k.judge(c)
	k.servers(c.MCPServers)
	k.execution(c.Execution)
	k.scoring(c)
	k.stop(c.Stop)
	k.batch(c)
}

func (k *checker) fail(key, format string, args ...any) {
	k.errs = append(k.errs, &FieldError{File: k.file, Line: k.line(key), Key: key, Err: fmt.Errorf(format, args...)})
}

func (k *checker) line(key string) int {
	for key != "" {
		if l, ok := k.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func (k *checker) atLeast(key string, got, lo int) {
	if got < lo {
		k.fail(key, "must be at least %d, got %d", lo, got)
	}
}

// within checks an integer setting against its lower and upper bound.
func (k *checker) within(key string, got, lo, hi int) {
	k.atLeast(key, got, lo)
	if got > hi {
		k.fail(key, "must be at most %d, got %d", hi, got)
	}
}

func (k *checker) between(key string, got, lo, hi float64) {
	if got < lo || got > hi {
		k.fail(key, "must be between %v and %v, got %v", lo, hi, got)
	}
}

func (k *checker) dataset(d Dataset) {
	if d.Path == "" {
		k.fail("dataset.path", "required: the dataset file to run")
	}
	if d.Kind != "" && !d.Kind.Valid() {
		k.fail("dataset.kind", "unknown kind %q (want qa, mcq, math or code)", d.Kind)
	}
}

func (k *checker) agent(a Agent) {
	k.agentType(a)
	k.keyEnv("agent.api_key_env", a.APIKeyEnv)
	k.agentModels(a)
	if a.Temperature != nil {
		k.between("agent.temperature", *a.Temperature, 0, 2)
	}
	k.atLeast("agent.max_tokens", a.MaxTokens, 0)
	if !a.Type.RunsProgram() {
		k.atLeast("agent.max_turns", a.MaxTurns, 1)
	}
	k.within("agent.timeout_seconds", a.TimeoutSeconds, 1, MaxTimeoutSeconds)
	k.baseURL("agent.base_url", a.BaseURL)
}

// agentType checks the agent's type and what each type needs or refuses.
func (k *checker) agentType(a Agent) {
	switch a.Type {
	case AgentOpenAI, AgentAnthropic:
		if a.Model == "" {
			k.fail("agent.model", "required for agent type %s", a.Type)
		}
		if len(a.Command) > 0 {
			k.fail("agent.command", "only for agent type command")
		}
		if len(a.Env) > 0 {
			k.fail("agent.env", "only for a command agent: the built-in agent starts no program")
		}
	case AgentCommand:
		if len(a.Command) == 0 || a.Command[0] == "" {
			k.fail("agent.command", "required for agent type command: the program and its arguments, as a list")
		}
	case AgentClaudeCode:
		if len(a.Command) > 0 && a.Command[0] == "" {
			k.fail("agent.command", "the Claude Code program, and any arguments to put first; leave it out to run claude from PATH")
		}
	case "":
		k.fail("agent.type", "required: openai, anthropic, claude_code or command")
	default:
		k.fail("agent.type", "unknown agent type %q (want openai, anthropic, claude_code (k-eval's claude_code_sdk) or command)", a.Type)
	}
}

// agentModels checks the agent's models: each named once, with its model,
// key variable, temperature and address.
func (k *checker) agentModels(a Agent) {
	if len(a.Models) > 0 && a.Type != AgentOpenAI && a.Type != AgentAnthropic {
		k.fail("agent.models", "only for agent types openai and anthropic: a program chooses its own model")
	}
	names := map[string]bool{}
	for i, m := range a.Models {
		key := fmt.Sprintf("agent.models[%d]", i)
		if m.Model == "" {
			k.fail(key+".model", "required: the model this one of the agent's models uses")
		}
		if names[m.Name] {
			k.fail(key+".name", "%q twice: give each model its own name", m.Name)
		}
		names[m.Name] = true
		k.keyEnv(key+".api_key_env", m.APIKeyEnv)
		if m.Temperature != nil {
			k.between(key+".temperature", *m.Temperature, 0, 2)
		}
		k.baseURL(key+".base_url", m.BaseURL)
	}
}

// baseURL checks an address models are reached at: http(s), with a host.
func (k *checker) baseURL(key, u string) {
	// A stored config keeps its ${NAME} references (a run judging another's
	// answers again is made from one): each was checked as it expanded
	// when its file was read.
	if u == "" || strings.Contains(u, "${") {
		return
	}
	// One URL: two pasted together (http://a/v1http://a/v1) parse as one
	// whose path holds the second.
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" ||
		strings.Count(u, "://") != 1 || strings.ContainsAny(u, " \t\n") {
		k.fail(key, "%q is not one http(s) URL such as http://127.0.0.1:11434/v1", u)
	}
}

// judge checks the judge. Whether a judge is needed at all is known here
// only when the file names its evaluators or its dataset kind.
func (k *checker) judge(c *Config) {
	known := len(c.Evaluators) > 0 || len(c.Assertions) > 0 || c.Dataset.Kind != ""
	if known && c.Judge.Model == "" && slices.ContainsFunc(c.EvaluatorsFor(""), Evaluator.UsesJudge) {
		k.fail("judge.model", "required by the rubric and arbiter evaluators")
	}
	if len(c.Judges) == 0 {
		k.oneJudge("judge", c.Judge)
	}
	if _, both := k.lines["judge"]; both && len(c.Judges) > 0 {
		k.fail("judges", "a panel is written under judges: alone; move judge: into the list")
	}
	names := map[string]bool{}
	for i, j := range c.Judges {
		key := fmt.Sprintf("judges[%d]", i)
		if j.Model == "" {
			k.fail(key+".model", "required: the model this judge of the panel uses")
		}
		if names[j.Name] {
			k.fail(key+".name", "%q twice: give each judge of the panel its own name", j.Name)
		}
		names[j.Name] = true
		k.oneJudge(key, j)
	}
	switch c.PanelMode {
	case "", PanelMean, PanelMedian, PanelFirst:
	default:
		k.fail("panel", "want mean, median or first (got %q)", c.PanelMode)
	}
}

// oneJudge checks one judge's settings; key is where it is written.
func (k *checker) oneJudge(key string, j Judge) {
	if j.Type != "" && j.Type != ProviderOpenAI && j.Type != ProviderAnthropic {
		k.fail(key+".type", "unknown type %q (want openai or anthropic)", j.Type)
	}
	k.keyEnv(key+".api_key_env", j.APIKeyEnv)
	k.between(key+".temperature", j.Temperature, 0, 2)
	k.within(key+".timeout_seconds", j.TimeoutSeconds, 1, MaxTimeoutSeconds)
	k.baseURL(key+".base_url", j.BaseURL)
}

func (k *checker) servers(servers []MCPServer) {
	for _, s := range servers {
		key := "mcp_servers." + s.Name
		stdioOnly := s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0
		remoteOnly := s.URL != "" || len(s.Headers) > 0
		switch s.Type {
		case assay.TransportStdio:
			if s.Command == "" {
				k.fail(key+".command", "required for type stdio")
			}
			if remoteOnly {
				k.fail(key, "url and headers are only for type http or sse")
			}
		case assay.TransportHTTP, assay.TransportSSE:
			if s.URL == "" {
				k.fail(key+".url", "required for type %s", s.Type)
			}
			if stdioOnly {
				k.fail(key, "command, args and env are only for type stdio")
			}
		case "":
			k.fail(key+".type", "required: stdio, http or sse")
		default:
			k.fail(key+".type", "unknown type %q (want stdio, http or sse)", s.Type)
		}
	}
}

func (k *checker) conditions(c *Config) {
	if len(c.ConditionSpecs) == 0 {
		k.fail("conditions", "at least one condition is required")
	}
	defined := make([]string, 0, len(c.MCPServers))
	for _, s := range c.MCPServers {
		defined = append(defined, s.Name)
	}
	for _, spec := range c.ConditionSpecs {
		key := "conditions." + spec.Name
		if !slug.MatchString(spec.Name) {
			k.fail(key, "condition names may use only a-z, 0-9, _ and -")
		}
		for i, name := range spec.MCPServers {
			switch {
			case !slices.Contains(defined, name):
				k.fail(fmt.Sprintf("%s.mcp_servers[%d]", key, i), "undefined MCP server %q (%s)", name, listDefined(defined))
			case slices.Index(spec.MCPServers, name) < i:
				k.fail(fmt.Sprintf("%s.mcp_servers[%d]", key, i), "MCP server %q listed twice", name)
			}
		}
		if len(spec.MCPServers) == 0 && (spec.RequireMCPToolUse || spec.RequireMCPToolSuccess) {
			k.fail(key, "require_mcp_tool_use and require_mcp_tool_success need at least one MCP server")
		}
	}
}

func listDefined(names []string) string {
	if len(names) == 0 {
		return "mcp_servers defines none"
	}
	return "defined: " + strings.Join(names, ", ")
}

func (k *checker) execution(e Execution) {
	k.within("execution.num_repetitions", e.NumRepetitions, 1, MaxRepetitions)
	k.within("execution.max_concurrent", e.MaxConcurrent, 1, MaxConcurrent)
	k.atLeast("execution.retry.max_attempts", e.Retry.MaxAttempts, 1)
	if e.Retry.InitialBackoffSeconds < 0 {
		k.fail("execution.retry.initial_backoff_seconds", "must be at least 0, got %v", e.Retry.InitialBackoffSeconds)
	}
	if e.Retry.BackoffMultiplier < 1 {
		k.fail("execution.retry.backoff_multiplier", "must be at least 1, got %v", e.Retry.BackoffMultiplier)
	}
}

func (k *checker) scoring(c *Config) {
	for i, e := range c.Evaluators {
		key := fmt.Sprintf("evaluators[%d]", i)
		switch {
		case !e.Valid():
			k.fail(key, "unknown evaluator %q (want one of %s)", e, joinEvaluators())
		case slices.Index(c.Evaluators, e) < i:
			k.fail(key, "evaluator %q listed twice", e)
		}
	}
	seen := map[string]bool{}
	for _, a := range c.Assertions {
		if seen[a.Name] {
			k.fail("evaluators", "the assertion %s is listed twice", a.Name)
		}
		seen[a.Name] = true
	}
	if c.BudgetUSD < 0 {
		k.fail("budget_usd", "must be at least 0 (0 means no budget), got %v", c.BudgetUSD)
	}
	k.between("judge_sample_rate", c.JudgeSampleRate, 0, 1)
	k.within("judge_repetitions", c.JudgeRepetitions, 1, MaxJudgeRepetitions)
	for model, p := range c.Prices {
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CacheReadPerMTok < 0 || p.CacheWritePerMTok < 0 {
			k.fail("prices."+model, "prices must be at least 0")
		}
		if p.BatchDiscount != nil {
			k.between("prices."+model+".batch_discount", *p.BatchDiscount, 0, 1)
		}
	}
	k.within("code_execution.timeout_seconds", c.CodeExecution.TimeoutSeconds, 1, MaxCodeTimeoutSeconds)
}

// joinEvaluators lists the evaluators, and the assertions written with them.
func joinEvaluators() string {
	names := make([]string, len(Evaluators))
	for i, e := range Evaluators {
		names[i] = string(e)
	}
	return strings.Join(names, ", ") + "; or an assertion: json_valid, or {KIND: …} for " +
		strings.Join(slices.DeleteFunc(slices.Clone(AssertionKinds), func(k string) bool { return k == AssertJSONValid }), ", ")
}
