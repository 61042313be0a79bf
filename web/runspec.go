package web

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"strings"

	"assay"
	"assay/config"
	"assay/readmodel"
	"assay/runner"
	"assay/store"
	"assay/templates"
)

// runSpec is a checked new run form: what runner.Manager.Create takes.
type runSpec struct {
	cfg        *config.Config
	dataset    *store.Dataset
	conditions []assay.Condition
}

// readRunForm takes the new run form's fields as typed.
func readRunForm(v url.Values) templates.RunForm {
	return templates.RunForm{
		DatasetID:        v.Get("dataset"),
		Name:             v.Get("name"),
		Conditions:       v["condition"],
		Evaluators:       v["evaluator"],
		Prompt:           strings.ReplaceAll(v.Get("prompt"), "\r\n", "\n"),
		Assertions:       strings.ReplaceAll(v.Get("assertions"), "\r\n", "\n"),
		Repetitions:      v.Get("repetitions"),
		Concurrency:      v.Get("concurrency"),
		BudgetUSD:        v.Get("budget_usd"),
		AllowUnpriced:    v.Get("allow_unpriced") != "",
		FixedConcurrency: v.Get("fixed_concurrency") != "",
		BatchJudge:       v.Get("batch_judge") != "",
		StopWhen:         v.Get("stop_when"),
		StopMetric:       strings.TrimSpace(v.Get("stop_metric")),
		StopAlpha:        v.Get("stop_alpha"),
		StopHalfWidth:    v.Get("stop_half_width"),
		StopMargin:       v.Get("stop_margin"),
		StopMinSamples:   v.Get("stop_min_samples"),
		StopSeed:         v.Get("stop_seed"),
		AgentType:        v.Get("agent_type"),
		AgentCommand:     strings.ReplaceAll(v.Get("agent_command"), "\r\n", "\n"),
		AgentTimeout:     v.Get("agent_timeout"),
		AgentBaseURL:     v.Get("agent_base_url"),
		AgentModel:       v.Get("agent_model"),
		AgentModelName:   strings.TrimSpace(v.Get("agent_model_name")),
		AgentModels:      strings.ReplaceAll(v.Get("agent_models"), "\r\n", "\n"),
		AgentKeyEnv:      v.Get("agent_key_env"),
		AgentTemperature: v.Get("agent_temperature"),
		AgentMaxTokens:   v.Get("agent_max_tokens"),
		JudgeBaseURL:     v.Get("judge_base_url"),
		JudgeModel:       v.Get("judge_model"),
		JudgeKeyEnv:      v.Get("judge_key_env"),
		JudgeTemperature: v.Get("judge_temperature"),
		JudgeSeed:        v.Get("judge_seed"),
		SampleRate:       v.Get("judge_sample_rate"),
		JudgeRepetitions: v.Get("judge_repetitions"),
		JudgeVarySeed:    v.Get("judge_vary_seed") != "",
		JudgeMore:        strings.ReplaceAll(v.Get("judge_more"), "\r\n", "\n"),
		Panel:            v.Get("panel"),
		CodeTimeout:      v.Get("code_timeout"),
		Unsandboxed:      v.Get("unsandboxed") != "",
	}
}

// defaultConfig is what a run file that says nothing gets (config.Defaults)
// with an OpenAI-compatible agent: the form starts from it.
func defaultConfig() *config.Config {
	cfg := config.Defaults()
	cfg.Agent.Type = config.AgentOpenAI
	cfg.Agent.APIKeyEnv = config.DefaultKeyEnv
	cfg.Judge.APIKeyEnv = config.DefaultKeyEnv
	return cfg
}

// formFromConfig fills the form's fields from a run's config.
func formFromConfig(cfg *config.Config) templates.RunForm {
	f := templates.RunForm{
		Repetitions:      strconv.Itoa(cfg.Execution.NumRepetitions),
		Concurrency:      strconv.Itoa(cfg.Execution.MaxConcurrent),
		FixedConcurrency: !cfg.Execution.Adapts(),
		BatchJudge:       cfg.Batch != nil && cfg.Batch.Judge,
		AgentType:        string(cfg.Agent.Type),
		AgentCommand:     strings.Join(cfg.Agent.Command, "\n"),
		AgentTimeout:     strconv.Itoa(cfg.Agent.TimeoutSeconds),
		AgentBaseURL:     cfg.Agent.BaseURL,
		AgentModel:       cfg.Agent.Model,
		AgentKeyEnv:      cfg.Agent.APIKeyEnv,
		JudgeBaseURL:     cfg.Judge.BaseURL,
		JudgeModel:       cfg.Judge.Model,
		JudgeKeyEnv:      cfg.Judge.APIKeyEnv,
		JudgeTemperature: readmodel.Number(cfg.Judge.Temperature),
		JudgeSeed:        strconv.Itoa(cfg.Judge.Seed),
		SampleRate:       readmodel.Number(cfg.JudgeSampleRate),
		JudgeRepetitions: strconv.Itoa(cfg.JudgeRepetitions),
		JudgeVarySeed:    cfg.Judge.VarySeed,
		Panel:            cfg.PanelMode,
		CodeTimeout:      strconv.Itoa(cfg.CodeExecution.TimeoutSeconds),
		Unsandboxed:      cfg.CodeExecution.Unsandboxed,
	}
	if cfg.Agent.Temperature != nil {
		f.AgentTemperature = readmodel.Number(*cfg.Agent.Temperature)
	}
	if len(cfg.Judges) > 1 {
		var lines []string
		for _, j := range cfg.Judges[1:] {
			lines = append(lines, j.Name+": "+j.Model)
		}
		f.JudgeModel, f.JudgeMore = cfg.Judges[0].Model, strings.Join(lines, "\n")
	}
	if len(cfg.Agent.Models) > 1 {
		formModels(&f, cfg.Agent.Models)
	}
	if cfg.Agent.MaxTokens > 0 {
		f.AgentMaxTokens = strconv.Itoa(cfg.Agent.MaxTokens)
	}
	if cfg.BudgetUSD > 0 {
		f.BudgetUSD = readmodel.Number(cfg.BudgetUSD)
	}
	if cfg.Stop != nil {
		formStop(&f, cfg.Stop)
	}
	return f
}

// formModels fills the form's models: the first in the agent's fields, a
// line for each other.
func formModels(f *templates.RunForm, models []config.AgentModel) {
	var lines []string
	for _, m := range models[1:] {
		lines = append(lines, m.Name+": "+m.Model)
	}
	f.AgentModel, f.AgentModels = models[0].Model, strings.Join(lines, "\n")
	if name := models[0].Name; name != models[0].Model {
		f.AgentModelName = name
	}
}

// formStop fills the form's stopping rule.
func formStop(f *templates.RunForm, st *config.Stop) {
	f.StopWhen, f.StopMetric = st.When, st.Metric
	f.StopAlpha, f.StopHalfWidth, f.StopMargin = optNumber(st.Alpha), optNumber(st.HalfWidth), optNumber(st.Margin)
	if st.MinSamples > 0 {
		f.StopMinSamples = strconv.Itoa(st.MinSamples)
	}
	if st.Seed != 0 {
		f.StopSeed = strconv.Itoa(st.Seed)
	}
}

// optNumber is v for a field, "" for 0 (the field's default).
func optNumber(v float64) string {
	if v == 0 {
		return ""
	}
	return readmodel.Number(v)
}

// runSpec checks the form and builds the run it describes. Its errors are
// EINVALID with a message naming the field.
func (s *Server) runSpec(ctx context.Context, f templates.RunForm) (*runSpec, error) {
	ds, err := s.formDataset(ctx, f.DatasetID)
	if err != nil {
		return nil, err
	}
	conds, err := s.formConditions(ctx, f.Conditions)
	if err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	p := &fieldParser{}
	cfg.Execution.NumRepetitions = p.integer("Repetitions", f.Repetitions, 1, config.MaxRepetitions)
	cfg.Execution.MaxConcurrent = p.integer("Concurrency", f.Concurrency, 1, config.MaxConcurrent)
	cfg.BudgetUSD = p.optFloat("Budget", f.BudgetUSD, 0, math.MaxFloat64, 0)
	cfg.AllowUnpriced = f.AllowUnpriced
	if f.BatchJudge {
		cfg.Batch = &config.Batch{Judge: true}
	}
	if f.FixedConcurrency {
		cfg.Execution.Adaptive = new(bool)
	}
	if f.StopWhen != "" {
		cfg.Stop = &config.Stop{When: f.StopWhen, Metric: f.StopMetric,
			Alpha:     p.optFloat("α", f.StopAlpha, 0, 0.5, 0),
			HalfWidth: p.optFloat("Half-width", f.StopHalfWidth, 0, math.MaxFloat64, 0),
			Margin:    p.optFloat("Margin", f.StopMargin, 0, math.MaxFloat64, 0)}
		if strings.TrimSpace(f.StopMinSamples) != "" {
			cfg.Stop.MinSamples = p.whole("At least", f.StopMinSamples)
		}
		if strings.TrimSpace(f.StopSeed) != "" {
			cfg.Stop.Seed = p.whole("Seed", f.StopSeed)
		}
	}
	p.agent(&cfg.Agent, f)
	p.judge(cfg, f)
	p.rubrics(cfg, f.Evaluators, func(name string) (*config.Rubric, error) { return runner.SavedRubric(ctx, s.db, name) })
	p.assertions(cfg, f.Assertions)
	p.evaluators(cfg, f.Evaluators, ds.Kind)
	p.prompt(cfg, f.Prompt, ds.Kind)
	if ds.Kind == assay.KindCode {
		if strings.TrimSpace(f.CodeTimeout) != "" {
			cfg.CodeExecution.TimeoutSeconds = p.whole("Code timeout", f.CodeTimeout)
		}
		cfg.CodeExecution.Unsandboxed = f.Unsandboxed
	}
	if p.err != nil {
		return nil, p.err
	}
	// The form's fields were read with messages of its own; the run file's
	// rules hold for it all the same.
	if err := cfg.Validate(); err != nil {
		return nil, assay.Errorf(assay.EINVALID, "%s", err)
	}
	cfg.Name = strings.TrimSpace(f.Name)
	if cfg.Name == "" {
		cfg.Name = ds.Name + " · " + cfg.Agent.Model
	}
	cfg.Dataset = config.Dataset{Kind: ds.Kind}
	return &runSpec{cfg: cfg, dataset: ds, conditions: conds}, nil
}

func (s *Server) formDataset(ctx context.Context, id string) (*store.Dataset, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, assay.Errorf(assay.EINVALID, "Dataset: choose the dataset to run.")
	}
	ds, err := s.db.Dataset(ctx, n)
	if assay.ErrorCode(err) == assay.ENOTFOUND {
		return nil, assay.Errorf(assay.EINVALID, "Dataset: that dataset no longer exists; choose another.")
	}
	return ds, err
}

// formConditions returns the chosen conditions in the order of the list.
func (s *Server) formConditions(ctx context.Context, ids []string) ([]assay.Condition, error) {
	if len(ids) == 0 {
		return nil, assay.Errorf(assay.EINVALID, "Conditions: choose at least one condition.")
	}
	all, err := s.db.Conditions(ctx)
	if err != nil {
		return nil, err
	}
	var out []assay.Condition
	for _, c := range all {
		for _, id := range ids {
			if id == strconv.FormatInt(c.ID, 10) {
				out = append(out, c)
				break
			}
		}
	}
	if len(out) != len(ids) {
		return nil, assay.Errorf(assay.EINVALID, "Conditions: a chosen condition no longer exists; reload the page.")
	}
	return out, nil
}
