package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"assay"
	"assay/config"
	"assay/runner/agent"
	"assay/runner/judge"
	"assay/runner/llm"
	"assay/runner/sandbox"
	"assay/runner/scoring"
	"assay/store"
)

// execution is one run being executed, with its agent and evaluators.
type execution struct {
	m          *Manager
	run        *store.Run
	spec       *config.Config
	dataset    *store.Dataset
	samples    *sampleSource
	agent      agent.Agent
	agentModel string
	models     map[string]modelAgent // a run over several models: each model's agent, by its name
	eval       *evaluators
	prices     prices
	timeout    time.Duration          // one answer, every turn and retry
	secrets    secrets                // the keys this run read: never in a stored message
	h          *handle                // the run's handle in this process
	pending    store.Pending          // work done for tasks not committed when the run last stopped
	keeping    sync.WaitGroup         // parts of tasks' work on their way to the store (keep)
	stopping   *stopping              // the run's stopping rule at work; nil for none
	claims     *claims                // its samples claimed among the run's executors, its share of them (spread.go)
	limiters   *limiterSet            // the adaptive limits of its models' endpoints
	batch      *batches               // its calls in batches (batch:); nil: every call live
	counts     map[string]*llm.Counts // what its calls met, by condition
}

// limiterSet gathers the limiters a run's clients call through.
type limiterSet struct {
	mu   sync.Mutex
	list []*llm.Limiter
}

// limit gives cfg the adaptive limit of its endpoint when spec adapts, and
// notes it among the run's.
func (m *Manager) limit(spec *config.Config, cfg llm.Config, set *limiterSet) llm.Config {
	if !spec.Execution.Adapts() || set == nil {
		return cfg
	}
	cfg.Limit = m.limits.For(cfg, spec.Execution.MaxConcurrent)
	set.mu.Lock()
	if !slices.Contains(set.list, cfg.Limit) {
		set.list = append(set.list, cfg.Limit)
	}
	set.mu.Unlock()
	return cfg
}

// prepare takes a run's snapshot, resolves its ${...} references in this
// process's environment, and builds what executing it needs. Its
// errors are the run's fault (a missing key, no sandbox) and fail the run.
func (m *Manager) prepare(run *store.Run, ds *store.Dataset, samples *sampleSource) (*execution, error) {
	stored := run.Config
	if err := bounded(run.TotalTasks, run.Repetitions, stored.Execution.MaxConcurrent); err != nil {
		return nil, err
	}
	spec, err := stored.Resolve(m.opts.Getenv)
	if run.RejudgedFrom != 0 {
		err = notTheAgents(err) // it calls no agent
	}
	if err != nil {
		return nil, err
	}
	ex := &execution{
		m:          m,
		run:        run,
		spec:       spec,
		dataset:    ds,
		samples:    samples,
		prices:     spec.Prices,
		agentModel: spec.Agent.Model,
		timeout:    seconds(spec.Agent.TimeoutSeconds, 300),
		secrets:    m.secretsOf(spec, run.Conditions),
		limiters:   &limiterSet{},
		counts:     m.countsOf(run),
	}
	if err := m.prepareAgents(ex, spec); err != nil {
		return nil, err
	}
	if ex.eval, err = m.newEvaluators(spec, ds.Kind, ex.limiters); err != nil {
		ex.close()
		return nil, err
	}
	return ex, nil
}

// prepareAgents builds the run's agents: none for a run judging another's
// answers again.
func (m *Manager) prepareAgents(ex *execution, spec *config.Config) error {
	if ex.run.RejudgedFrom != 0 {
		return nil
	}
	var err error
	// A run over several models answers through theirs alone: the agent's
	// own key may be unset when each model names its own.
	if len(spec.Agent.Models) == 0 {
		if ex.agent, err = m.newAgent(spec, ex.limiters); err != nil {
			return err
		}
	}
	for _, am := range spec.Agent.Models {
		one := *spec
		one.Agent = spec.Agent.WithModel(am)
		ma, err := m.newAgent(&one, ex.limiters)
		if err != nil {
			ex.close()
			return fmt.Errorf("agent.models %s: %w", am.Name, err)
		}
		if ex.models == nil {
			ex.models = map[string]modelAgent{}
		}
		ex.models[am.Name] = modelAgent{ma, am.Model}
	}
	return nil
}

// modelAgent is the agent as one of a run's models answers.
type modelAgent struct {
	agent agent.Agent
	model string
}

// agentFor is the agent that answers under a run's condition, and the
// model its answers are priced as when it does not say.
func (ex *execution) agentFor(c *assay.Condition) (agent.Agent, string) {
	if ma, ok := ex.models[c.Model]; ok && c.Model != "" {
		return ma.agent, ma.model
	}
	return ex.agent, ex.agentModel
}

// close stops every agent of the run.
func (ex *execution) close() {
	if ex.agent != nil {
		ex.agent.Close()
	}
	for _, ma := range ex.models {
		ma.agent.Close()
	}
}

// commandEnv resolves the variables a run sets for its command agent.
func (m *Manager) commandEnv(set map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(set))
	for name, v := range set {
		resolved, err := config.Expand(v, m.opts.Getenv)
		if err != nil {
			return nil, fmt.Errorf("agent.env.%s: %w", name, err)
		}
		out[name] = resolved
	}
	return out, nil
}

// apiKey reads the key from the environment variable the config names; a
// server on this machine (baseURL) is reached without one when the
// provider's default variable is unset (config.KeyOptional).
func (m *Manager) apiKey(field, env, baseURL string) (string, error) {
	if env == "" {
		return "", nil
	}
	key := m.opts.Getenv(env)
	if key == "" && !config.KeyOptional(env, baseURL) {
		return "", fmt.Errorf("%s: environment variable %s is not set", field, env)
	}
	return key, nil
}

func (m *Manager) retry(spec *config.Config) llm.RetryPolicy {
	r := spec.Execution.Retry
	return llm.RetryPolicy{MaxAttempts: r.MaxAttempts, InitialBackoff: time.Duration(r.InitialBackoffSeconds * float64(time.Second)),
		Multiplier: r.BackoffMultiplier, Sleep: m.opts.Sleep}
}

// newAgent builds the run's agent, wrapped in the condition guards, which
// retry as many times as the run's retry policy allows.
func (m *Manager) newAgent(spec *config.Config, lims *limiterSet) (agent.Agent, error) {
	a, err := m.baseAgent(spec, lims)
	if err != nil {
		return nil, err
	}
	return agent.Guarded(a, max(spec.Execution.Retry.MaxAttempts, 1), seconds(spec.Agent.TimeoutSeconds, 300)), nil
}

func (m *Manager) baseAgent(spec *config.Config, lims *limiterSet) (agent.Agent, error) {
	timeout := seconds(spec.Agent.TimeoutSeconds, 300)
	switch spec.Agent.Type {
	case config.AgentCommand:
		if len(spec.Agent.Command) == 0 {
			return nil, fmt.Errorf("agent.command: required for agent.type command")
		}
		env, err := m.commandEnv(spec.Agent.Env)
		if err != nil {
			return nil, err
		}
		return agent.NewCommand(agent.CommandOptions{Argv: spec.Agent.Command, Timeout: timeout, Getenv: m.opts.Getenv, Env: env}), nil
	case config.AgentClaudeCode:
		argv, err := claudeCodeArgv(spec.Agent)
		if err != nil {
			return nil, err
		}
		env, err := m.claudeCodeEnv(spec)
		if err != nil {
			return nil, err
		}
		return agent.NewCommand(agent.CommandOptions{Argv: argv, Timeout: timeout, Getenv: m.opts.Getenv, Env: env}), nil
	case config.AgentOpenAI, config.AgentAnthropic:
	default:
		return nil, fmt.Errorf("agent.type %q: want openai, anthropic, claude_code or command", spec.Agent.Type)
	}
	provider, model, err := spec.Agent.Resolve()
	if err != nil {
		return nil, err
	}
	key, err := m.apiKey("agent.api_key_env", spec.Agent.APIKeyEnv, spec.Agent.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg := llm.Config{
		Provider:    llmProvider(provider),
		BaseURL:     spec.Agent.BaseURL,
		Model:       model,
		APIKey:      key,
		Temperature: spec.Agent.Temperature,
		MaxTokens:   spec.Agent.MaxTokens,
		CallTimeout: min(timeout, 120*time.Second),
		Retry:       m.retry(spec),
	}
	if provider == config.ProviderVertex {
		v, err := m.vertexAccess(context.Background(), "agent.model")
		if err != nil {
			return nil, err
		}
		cfg = onVertex(cfg, model, v)
	}
	client := llm.New(m.limit(spec, cfg, lims), m.opts.HTTPClient)
	return agent.NewOpenAI(client, agent.OpenAIOptions{MaxTurns: spec.Agent.MaxTurns, Getenv: m.opts.Getenv, Logger: m.log}), nil
}

func (m *Manager) newEvaluators(spec *config.Config, kind assay.Kind, lims *limiterSet) (*evaluators, error) {
	e := &evaluators{
		list:       spec.Evaluators,
		kind:       kind,
		judges:     map[config.Evaluator][]judgeCall{},
		sampleRate: spec.JudgeSampleRate,
		prices:     spec.Prices,
		clients:    map[string]*llm.Client{},
	}
	for _, ev := range spec.Evaluators {
		switch {
		case ev.UsesJudge():
			panel := spec.Panel()
			if len(panel) == 0 {
				return nil, fmt.Errorf("judge.model: required by the %s evaluator", ev.Label())
			}
			for index, jc := range panel {
				name := ""
				if len(spec.Judges) > 0 {
					name = jc.Name
				}
				for rep := range max(spec.JudgeRepetitions, 1) {
					seed := jc.Seed
					if jc.VarySeed {
						seed += rep
					}
					client, err := m.judgeClient(spec, jc, judgeKeyField(spec, index), seed, lims)
					if err != nil {
						return nil, err
					}
					f, err := judgeOf(spec, ev, client)
					if err != nil {
						return nil, err
					}
					e.clients[client.Endpoint()] = client
					e.judges[ev] = append(e.judges[ev], judgeCall{fn: f, judge: name, index: index, rep: rep, seed: seed, model: judgeModel(jc)})
				}
			}
		case ev == config.EvalCodeExecution:
			if err := sandbox.Available(); err != nil && !spec.CodeExecution.Unsandboxed {
				return nil, fmt.Errorf("code_execution: %w; or set code_execution.unsandboxed to run generated code without a sandbox", err)
			}
			e.code = &scoring.CodeEvaluator{Runner: &sandbox.Runner{Unsandboxed: spec.CodeExecution.Unsandboxed},
				Timeout: seconds(spec.CodeExecution.TimeoutSeconds, 10)}
		}
	}
	return e, nil
}

// judgeOf is the judge of an evaluator that uses one.
func judgeOf(spec *config.Config, ev config.Evaluator, client *llm.Client) (judgeFunc, error) {
	if name, custom := ev.Rubric(); custom {
		r, ok := spec.RubricNamed(name)
		if !ok {
			return nil, fmt.Errorf("evaluators: no rubric %q under rubrics", name)
		}
		return judge.NewCustom(client, *r).Judge, nil
	}
	if ev == config.EvalRubric {
		return (&judge.Rubric{Client: client}).Judge, nil
	}
	return (&judge.Arbiter{Client: client}).Judge, nil
}

// judgeKeyField is where a panel judge's key variable is written.
func judgeKeyField(spec *config.Config, index int) string {
	if len(spec.Judges) > 0 {
		return fmt.Sprintf("judges[%d].api_key_env", index)
	}
	return "judge.api_key_env"
}

// judgeClient is a judge's client, asking with seed.
func (m *Manager) judgeClient(spec *config.Config, j config.Judge, keyField string, seed int, lims *limiterSet) (*llm.Client, error) {
	provider, model, err := j.Resolve()
	if err != nil {
		return nil, err
	}
	key, err := m.apiKey(keyField, j.APIKeyEnv, j.BaseURL)
	if err != nil {
		return nil, err
	}
	t := j.Temperature
	base := j.BaseURL
	if provider == config.ProviderAnthropic && base == "" {
		base = m.opts.Getenv("ANTHROPIC_BASE_URL") // as LiteLLM, under k-eval, reads it
	}
	cfg := llm.Config{
		Provider:    llmProvider(provider),
		BaseURL:     base,
		Model:       model,
		APIKey:      key,
		Temperature: &t,
		Seed:        &seed,
		CallTimeout: seconds(j.TimeoutSeconds, 120),
		// A judge's instructions (and schema) are the same in every call.
		CacheInstructions: true,
		Retry:             m.retry(spec),
	}
	if provider == config.ProviderVertex {
		v, err := m.vertexAccess(context.Background(), strings.Replace(keyField, "api_key_env", "model", 1))
		if err != nil {
			return nil, err
		}
		cfg = onVertex(cfg, model, v)
	}
	return llm.New(m.limit(spec, cfg, lims), m.opts.HTTPClient), nil
}

// judgeModel is the model the judge's calls are priced as: its name
// without a provider prefix.
func judgeModel(j config.Judge) string {
	if _, model, err := j.Resolve(); err == nil {
		return model
	}
	return j.Model
}

// llmProvider is the client's name for a provider.
func llmProvider(p config.Provider) llm.Provider {
	if p == config.ProviderAnthropic {
		return llm.ProviderAnthropic
	}
	return llm.ProviderOpenAI
}

func seconds(n, def int) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}
