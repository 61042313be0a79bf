package runner

import (
	"strings"

	"assay/runner/config"
	"assay/store"
)

// bounded refuses a run larger than a run may be. Create asks before a run
// is stored; execute asks again before planning one, for a run stored
// before the bounds existed: such a run fails with the reason instead of
// taking the process down at every start.
func bounded(tasks, repetitions, concurrency int) error {
	switch {
	case repetitions > config.MaxRepetitions:
		return store.Errorf(store.EINVALID, "execution.num_repetitions: must be at most %d, got %d", config.MaxRepetitions, repetitions)
	case concurrency > config.MaxConcurrent:
		return store.Errorf(store.EINVALID, "execution.max_concurrent: must be at most %d, got %d", config.MaxConcurrent, concurrency)
	case tasks > config.MaxTasks || tasks < 0:
		return store.Errorf(store.EINVALID, "the run would have %d tasks (samples × conditions × repetitions); a run may have at most %d: "+
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
// its agent and judge read. A server that echoes the key in an error body
// would otherwise put it in the database and every export.
type secrets []string

// secretsOf reads the keys that spec names.
func (m *Manager) secretsOf(spec *config.Config) secrets {
	var out secrets
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
	for _, env := range envs {
		if env == "" {
			continue
		}
		// Short values would blot out ordinary words; no real key is that short.
		if v := m.opts.Getenv(env); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}

// clean returns s with every secret replaced.
func (sc secrets) clean(s string) string {
	for _, v := range sc {
		if s != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// cleanResult removes secrets from what a result stores as text.
func (sc secrets) cleanResult(r *store.Result) {
	if len(sc) == 0 {
		return
	}
	r.Error = sc.clean(r.Error)
	for i := range r.Judgements {
		j := &r.Judgements[i]
		j.Error = sc.clean(j.Error)
		j.Raw = sc.clean(j.Raw)
		j.Detail = sc.clean(j.Detail)
	}
}
