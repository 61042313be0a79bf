package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"assay"
	"assay/config"
)

// Unset is an environment variable a run needs and the environment lacks,
// with every place that needs it.
type Unset struct {
	Name  string   `json:"name"`
	Where []string `json:"where"`
}

// UnsetVariables lists the variables a run of cfg under these conditions
// would miss in getenv's environment: the agent's and the judge's keys, the
// config's ${...} references and those of each condition's MCP servers.
// A run missing one would fail at its start, or its tools would.
func UnsetVariables(cfg *config.Config, evaluators []config.Evaluator, conditions []assay.Condition, getenv func(string) string) []Unset {
	byName := map[string]*Unset{}
	add := func(name, where string) {
		u := byName[name]
		if u == nil {
			u = &Unset{Name: name}
			byName[name] = u
		}
		if !slices.Contains(u.Where, where) {
			u.Where = append(u.Where, where)
		}
	}
	resolved, err := cfg.Resolve(getenv)
	unsetKeys(resolved, evaluators, getenv, add)
	for _, e := range leaves(err) {
		var u *config.UnsetError
		var f *config.FieldError
		if errors.As(e, &u) && errors.As(e, &f) {
			add(u.Name, f.Key)
		}
	}
	for _, c := range conditions {
		for _, s := range c.MCPServers {
			_, err := config.ResolveMCPServer(s, getenv)
			for _, e := range leaves(err) {
				var u *config.UnsetError
				if errors.As(e, &u) {
					field, _, _ := strings.Cut(strings.TrimPrefix(e.Error(), "mcp server "+s.Name+": "), ": ")
					add(u.Name, fmt.Sprintf("condition %s: MCP server %s: %s", c.Name, s.Name, field))
				}
			}
		}
	}
	out := make([]Unset, 0, len(byName))
	for _, u := range byName {
		slices.Sort(u.Where)
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b Unset) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// unsetKeys adds the key variables the agent, its models and the judges
// name that getenv has not. A key variable named by an unresolved
// reference is reported apart; a key a server on this machine may do
// without is not missing.
func unsetKeys(resolved *config.Config, evaluators []config.Evaluator, getenv func(string) string, add func(name, where string)) {
	agentKey := resolved.Agent.APIKeyEnv
	if resolved.Agent.Type == config.AgentClaudeCode {
		agentKey = claudeCodeKeyEnv(resolved.Agent, getenv)
	}
	missing := func(key, baseURL string) bool {
		return key != "" && !strings.Contains(key, "${") && getenv(key) == "" && !config.KeyOptional(key, baseURL)
	}
	if missing(agentKey, resolved.Agent.BaseURL) && len(resolved.Agent.Models) == 0 {
		add(agentKey, "agent.api_key_env")
	}
	for i, am := range resolved.Agent.Models {
		if missing(am.APIKeyEnv, am.BaseURL) {
			add(am.APIKeyEnv, fmt.Sprintf("agent.models[%d].api_key_env", i))
		}
	}
	if slices.ContainsFunc(evaluators, config.Evaluator.UsesJudge) {
		for i, j := range resolved.Panel() {
			if missing(j.APIKeyEnv, j.BaseURL) {
				add(j.APIKeyEnv, judgeKeyField(resolved, i))
			}
		}
	}
}

// Getenv reads this manager's environment: what its runs resolve ${...} with.
func (m *Manager) Getenv(name string) string { return m.opts.Getenv(name) }

// UnsetVariables lists what a run of cfg would miss in this manager's environment.
func (m *Manager) UnsetVariables(cfg *config.Config, evaluators []config.Evaluator, conditions []assay.Condition) []Unset {
	return UnsetVariables(cfg, evaluators, conditions, m.opts.Getenv)
}

// leaves flattens errors joined with errors.Join.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// isKey reports whether u is needed only as an API key variable.
func (u Unset) isKey() bool {
	return !slices.ContainsFunc(u.Where, func(w string) bool { return !strings.HasSuffix(w, "api_key_env") })
}

// Places is where a variable is needed, for a sentence.
func (u Unset) Places() string { return strings.Join(u.Where, "; ") }

// DescribeUnset lists missing variables with where each is needed, and the
// verb that agrees with them: "A (agent.api_key_env), B (…)", "are".
func DescribeUnset(list []Unset) (text, verb string) {
	parts := make([]string, len(list))
	for i, u := range list {
		parts[i] = fmt.Sprintf("%s (%s)", u.Name, u.Places())
	}
	verb = "are"
	if len(list) == 1 {
		verb = "is"
	}
	return strings.Join(parts, ", "), verb
}

// unsetError is the refusal of a run that would miss variables: every one,
// with where it is needed.
func unsetError(list []Unset) error {
	text, verb := DescribeUnset(list)
	noun := "This environment variable"
	if len(list) > 1 {
		noun = "These environment variables"
	}
	advice := "Set them in the environment of the process that runs it: stop assay serve and start it again as NAME=value assay serve (or export NAME first), or run assay run with NAME set."
	if slices.ContainsFunc(list, Unset.isKey) {
		advice += " A model server on this machine (a base URL on localhost or 127.0.0.1) needs no key: name OPENAI_API_KEY (or ANTHROPIC_API_KEY) as its key variable, or none, and leave it unset."
	}
	if slices.ContainsFunc(list, func(u Unset) bool { return !u.isKey() }) {
		advice += " A ${NAME} reference in a run file may give a default: ${NAME:-value}."
	}
	return assay.Errorf(assay.EINVALID, "%s %s not set where this run would execute: %s. %s", noun, verb, text, advice)
}
