package runner

import (
	"assay/runner/llm"
	"assay/store"
)

// countsOf returns what a run's calls met in this process, by condition:
// one set of counters for the run's life here, so that a resumed run adds
// to them.
func (m *Manager) countsOf(run *store.Run) map[string]*llm.Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[int64]map[string]*llm.Counts{}
	}
	c := m.counts[run.ID]
	if c == nil {
		c = map[string]*llm.Counts{}
		m.counts[run.ID] = c
	}
	for _, cond := range run.Conditions {
		if c[cond.Name] == nil {
			c[cond.Name] = &llm.Counts{}
		}
	}
	return c
}

// RateLimited counts, by condition, the calls of a run answered 429 while
// this process executed it (agent and judges together).
func (m *Manager) RateLimited(id int64) map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for name, c := range m.counts[id] {
		out[name] = c.RateLimited.Load()
	}
	return out
}

// Limits says where the adaptive limits of a run executing here stand,
// one per endpoint its models are called at; none when it executes
// elsewhere or calls no endpoint of a model.
func (m *Manager) Limits(id int64) []llm.LimitState {
	m.mu.Lock()
	h, ok := m.active[id]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	set := h.limiters.Load()
	if set == nil {
		return nil
	}
	set.mu.Lock()
	list := set.list
	set.mu.Unlock()
	return llm.States(list...)
}
