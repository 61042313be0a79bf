package runner

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"assay"
	"assay/config"
	"assay/internal/redact"
	"assay/store"
)

// bounded refuses a run larger than a run may be. Create asks before a run
// is stored; execute asks again before planning one, for a run stored
// before the bounds existed: such a run fails with the reason instead of
// taking the process down at every start.
func bounded(tasks, repetitions, concurrency int) error {
	switch {
	case repetitions > config.MaxRepetitions:
		return assay.Errorf(assay.EINVALID, "execution.num_repetitions: must be at most %d, got %d", config.MaxRepetitions, repetitions)
	case concurrency > config.MaxConcurrent:
		return assay.Errorf(assay.EINVALID, "execution.max_concurrent: must be at most %d, got %d", config.MaxConcurrent, concurrency)
	case tasks > config.MaxTasks || tasks < 0:
		return assay.Errorf(assay.EINVALID, "the run would have %d tasks (samples × conditions × repetitions); a run may have at most %d: "+
			"use fewer repetitions or conditions, or split the dataset", tasks, config.MaxTasks)
	}
	return nil
}

// taskCount is samples × conditions × repetitions, or -1 past what an int holds.
func taskCount(samples, conditions, repetitions int) int {
	n := int64(samples) * int64(conditions)
	if conditions != 0 && n/int64(conditions) != int64(samples) {
		return -1
	}
	m := n * int64(repetitions)
	if repetitions != 0 && m/int64(repetitions) != n {
		return -1
	}
	return int(m)
}

// secrets are the values a run's messages must never carry: the API keys
// its agent and judge read, and the secret-looking values its MCP servers
// and command agent are given. A server that echoes one in an error body
// would otherwise put it in the database and every export.
type secrets []string

// secretsOf reads the secret values of spec run under conditions.
func (m *Manager) secretsOf(spec *config.Config, conditions []assay.Condition) secrets {
	var out secrets
	for _, env := range m.keyVariables(spec) {
		if env != "" {
			out.add(m.opts.Getenv(env))
		}
	}
	// A command agent's env keeps its ${...} references until the agent
	// starts: its secrets are the values they take, and what a reference to
	// a secret-looking variable brings under any name.
	for name, v := range spec.Agent.Env {
		resolved, err := config.Expand(v, m.opts.Getenv)
		if err != nil {
			continue // the agent cannot start: it is given nothing
		}
		if config.LooksSecret(name) || slices.ContainsFunc(config.ReferencedNames(v), config.LooksSecret) {
			out.addValues(map[string]string{"SECRET": resolved})
		}
	}
	for _, c := range conditions {
		for _, srv := range c.MCPServers {
			resolved, err := config.ResolveMCPServer(srv, m.opts.Getenv)
			if err != nil {
				continue // the server cannot start: it is given nothing
			}
			out.addValues(resolved.Env)
			out.addValues(resolved.Headers)
		}
	}
	// A longer secret first, so that one holding another is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// keyVariables names the variables holding the keys of the run's agent,
// its models and its judges.
func (m *Manager) keyVariables(spec *config.Config) []string {
	agentKey := spec.Agent.APIKeyEnv
	if spec.Agent.Type == config.AgentClaudeCode {
		agentKey = claudeCodeKeyEnv(spec.Agent, m.opts.Getenv)
	}
	envs := []string{agentKey}
	for _, am := range spec.Agent.Models {
		envs = append(envs, am.APIKeyEnv)
	}
	for _, j := range spec.Panel() {
		envs = append(envs, j.APIKeyEnv)
	}
	return envs
}

// add keeps a secret value once. Short values would blot out ordinary
// words; no real key is that short.
func (out *secrets) add(v string) {
	if len(v) >= redact.MinLen && !slices.Contains(*out, v) {
		*out = append(*out, v)
	}
}

// addValues keeps the values of the secret-looking names, and of a value
// such as "Bearer KEY" the key alone: a server may echo it alone.
func (out *secrets) addValues(values map[string]string) {
	for name, v := range values {
		if config.LooksSecret(name) {
			out.add(v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				out.add(strings.TrimSpace(cred))
			}
		}
	}
}

// clean returns s with every secret replaced, and every part of one
// where s was cut.
func (sc secrets) clean(s string) string { return redact.Secrets(sc).Clean(s) }

// cleanAll cleans each of ss in place.
func (sc secrets) cleanAll(ss []string) {
	for i := range ss {
		ss[i] = sc.clean(ss[i])
	}
}

// cleanResult removes secrets from every text a result stores: the answer,
// its error and retries, its tool calls, and each judgement's output,
// reasoning and claims. Slices are copied before they are changed, so a
// result shared with another goroutine is not written under it.
func (sc secrets) cleanResult(r *store.Result) {
	if len(sc) == 0 {
		return
	}
	r.Response = sc.clean(r.Response)
	r.Error = sc.clean(r.Error)
	if len(r.Retries) > 0 {
		r.Retries = slices.Clone(r.Retries)
		sc.cleanAll(r.Retries)
	}
	if len(r.ToolCalls) > 0 {
		r.ToolCalls = slices.Clone(r.ToolCalls)
		for i := range r.ToolCalls {
			tc := &r.ToolCalls[i]
			tc.Result, tc.Thought = sc.clean(tc.Result), sc.clean(tc.Thought)
			if args := string(tc.Arguments); args != "" {
				if c := sc.clean(args); c != args {
					if !json.Valid([]byte(c)) {
						c = strconv.Quote(c)
					}
					tc.Arguments = json.RawMessage(c)
				}
			}
		}
	}
	if len(r.Judgements) > 0 {
		r.Judgements = slices.Clone(r.Judgements)
		for i := range r.Judgements {
			sc.cleanJudgement(&r.Judgements[i])
		}
	}
}

func (sc secrets) cleanJudgement(j *store.Judgement) {
	j.Error = sc.clean(j.Error)
	j.Raw = sc.clean(j.Raw)
	j.Detail = sc.clean(j.Detail)
	if len(j.UnverifiedClaims) > 0 {
		j.UnverifiedClaims = slices.Clone(j.UnverifiedClaims)
		sc.cleanAll(j.UnverifiedClaims)
	}
	if len(j.Scores) > 0 {
		j.Scores = slices.Clone(j.Scores)
		for k := range j.Scores {
			j.Scores[k].Reasoning = sc.clean(j.Scores[k].Reasoning)
		}
	}
}
