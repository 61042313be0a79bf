package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/readmodel"
	"assay/runner"
	"assay/runner/judge"
	"assay/store"
	"assay/tally"
	"assay/templates"
)

// newRunPage handles GET /runs/new. ?dataset= picks the dataset; when the
// form itself asks (filled=1, on a change of dataset) its fields are kept and
// the evaluators and prompt follow the new dataset's kind.
func (s *Server) newRunPage(c echo.Context) error {
	ctx := c.Request().Context()
	q := c.QueryParams()
	var f templates.RunForm
	switch {
	case q.Get("filled") != "":
		f = readRunForm(q)
	case q.Get("fresh") != "":
		f = formFromConfig(defaultConfig())
		f.DatasetID = q.Get("dataset")
	default:
		var err error
		if f, err = s.lastRunForm(ctx); err != nil {
			return err
		}
		f.DatasetID = q.Get("dataset")
	}
	return s.renderRunForm(c, http.StatusOK, f)
}

// lastRunForm starts the form from the newest run's settings and conditions,
// so a user does not type the agent and judge again; without a run, from the
// defaults, with the only condition chosen if there is just one.
func (s *Server) lastRunForm(ctx context.Context) (templates.RunForm, error) {
	f := formFromConfig(defaultConfig())
	conds, err := s.db.Conditions(ctx)
	if err != nil {
		return f, err
	}
	chosen := map[string]bool{}
	if len(conds) == 1 {
		chosen[conds[0].Name] = true
	}
	last, err := tally.Of(s.db).LatestRun(ctx)
	if err != nil && !errors.Is(err, assay.ErrNotFound) {
		return f, err
	}
	if last != nil {
		if last.Config != nil { // nil: it cannot be read, and the form starts afresh
			f, f.FromRun = formFromConfig(last.Config), last.ID
			f.BudgetUSD = "" // a budget belongs to one run
		}
		for _, name := range last.ConditionNames {
			chosen[name] = true
		}
	}
	for _, c := range conds {
		if chosen[c.Name] {
			f.Conditions = append(f.Conditions, strconv.FormatInt(c.ID, 10))
			delete(chosen, c.Name)
		}
	}
	if last != nil {
		for _, name := range last.ConditionNames {
			if chosen[name] {
				f.UnsavedConditions = append(f.UnsavedConditions, name)
			}
		}
	}
	return f, nil
}

// createRun handles POST /runs: creates the run, starts it and shows it.
func (s *Server) createRun(c echo.Context) error {
	ctx := c.Request().Context()
	form, err := c.FormParams()
	if err != nil {
		return assay.Errorf(assay.EINVALID, "The form could not be read: %v", err)
	}
	f := readRunForm(form)
	spec, err := s.runSpec(ctx, f)
	if err == nil && spec.cfg.Agent.Type.RunsProgram() && !s.cfg.AllowCommandAgents {
		err = assay.Errorf(assay.EINVALID, "Agent: this server does not start programs from the browser; "+
			"restart it with --allow-command-agents, or run this agent from a run file with assay run.")
	}
	var run *store.Run
	if err == nil {
		run, err = s.runner.Create(ctx, spec.cfg, spec.dataset.ID, spec.conditions)
	}
	if err != nil {
		if assay.ErrorCode(err) != assay.EINVALID {
			return err
		}
		f.Error = assay.ErrorMessage(err)
		return s.renderRunForm(c, http.StatusUnprocessableEntity, forgetKeys(f))
	}
	if err := s.runner.Start(run.ID); err != nil {
		return fmt.Errorf("start run %d: %w", run.ID, err)
	}
	setFlash(c, "ok", fmt.Sprintf("Launched run %d: %s tasks.", run.ID, templates.Int(run.TotalTasks)))
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}

// forgetKeys clears a key variable field that does not hold a variable's
// name, and says so: it may hold the key itself, which a page never shows.
func forgetKeys(f templates.RunForm) templates.RunForm {
	cleared := false
	for _, field := range []*string{&f.AgentKeyEnv, &f.JudgeKeyEnv} {
		if v := strings.TrimSpace(*field); v != "" && !config.IsEnvName(v) {
			*field, cleared = "", true
		}
	}
	if cleared {
		f.Error += " The field was cleared so that this page does not show it."
	}
	return f
}

// runDefaults are the run's defaults (config.Defaults) as the form shows them.
func runDefaults() templates.RunDefaults {
	d := config.Defaults()
	return templates.RunDefaults{AgentTimeout: strconv.Itoa(d.Agent.TimeoutSeconds), CodeTimeout: strconv.Itoa(d.CodeExecution.TimeoutSeconds),
		JudgeTemperature: readmodel.Number(d.Judge.Temperature), JudgeSeed: strconv.Itoa(d.Judge.Seed), SampleRate: readmodel.Number(d.JudgeSampleRate),
		JudgeRepetitions: strconv.Itoa(d.JudgeRepetitions), Concurrency: strconv.Itoa(d.Execution.MaxConcurrent)}
}

// renderRunForm shows the new run form with its options and estimate.
func (s *Server) renderRunForm(c echo.Context, status int, f templates.RunForm) error {
	ctx := c.Request().Context()
	v := templates.RunFormView{Page: s.page(c, "New run", "runs"), CommandAgents: s.cfg.AllowCommandAgents, Defaults: runDefaults()}
	if !v.CommandAgents {
		f.AgentType = string(config.AgentOpenAI)
	}
	datasets, err := s.db.Datasets(ctx)
	if err != nil {
		return err
	}
	for _, d := range datasets {
		v.Datasets = append(v.Datasets, templates.DatasetOption{ID: d.ID, Name: d.Name, Kind: string(d.Kind), Samples: d.Samples})
		if f.DatasetID == strconv.FormatInt(d.ID, 10) {
			v.Kind = string(d.Kind)
		}
	}
	if v.Kind == "" && len(datasets) > 0 {
		f.DatasetID, v.Kind = strconv.FormatInt(datasets[0].ID, 10), string(datasets[0].Kind)
	}
	kind := assay.Kind(v.Kind)
	if len(f.Evaluators) == 0 && f.Error == "" {
		for _, ev := range config.DefaultEvaluators(kind) {
			f.Evaluators = append(f.Evaluators, string(ev))
		}
	}
	if kind != assay.KindQA {
		v.DefaultPrompt = runner.PromptTemplate(config.Prompts{}, kind)
		if f.Prompt == "" {
			f.Prompt = v.DefaultPrompt
		}
	}
	if v.Conditions, err = s.conditionOptions(ctx, f.Conditions); err != nil {
		return err
	}
	if v.Evaluators, err = s.evaluatorOptions(ctx, f.Evaluators); err != nil {
		return err
	}
	v.Form = f
	if v.Estimate, err = s.estimate(ctx, f); err != nil {
		return err
	}
	return render(c, status, templates.NewRun(v))
}

func (s *Server) conditionOptions(ctx context.Context, chosen []string) ([]templates.ConditionOption, error) {
	list, err := s.db.Conditions(ctx)
	if err != nil {
		return nil, err
	}
	var out []templates.ConditionOption
	for _, c := range list {
		id := strconv.FormatInt(c.ID, 10)
		out = append(out, templates.ConditionOption{
			ID:           c.ID,
			Name:         c.Name,
			SystemPrompt: c.SystemPrompt,
			Servers:      len(c.MCPServers),
			Checked:      contains(chosen, id),
		})
	}
	return out, nil
}

var evaluatorAbout = map[config.Evaluator]string{
	config.EvalRubric:        "LLM judge: factual adherence, completeness, helpfulness & clarity, each 1–5",
	config.EvalArbiter:       "LLM judge: semantic match and factuality, each 0–1",
	config.EvalExactMatch:    "the chosen letter against the reference",
	config.EvalNumericMatch:  "the final number against the reference",
	config.EvalCodeExecution: "runs the completion against the tests in a sandbox",
}

// evaluatorOptions lists the built-in evaluators, then the rubrics saved on
// the Rubrics page.
func (s *Server) evaluatorOptions(ctx context.Context, chosen []string) ([]templates.EvaluatorOption, error) {
	var out []templates.EvaluatorOption
	for _, ev := range config.Evaluators {
		prompt, _ := judge.PromptOf(ev, nil)
		out = append(out, templates.EvaluatorOption{
			Name:    string(ev),
			Label:   string(ev),
			About:   evaluatorAbout[ev],
			ForKind: string(ev.Kind()),
			Judge:   ev.UsesJudge(),
			Checked: contains(chosen, string(ev)),
			Prompt:  prompt,
		})
	}
	saved, err := s.db.Rubrics(ctx)
	if err != nil {
		return nil, err
	}
	for _, sr := range saved {
		r, err := config.ParseRubric(sr.Name, sr.Source, "rubric")
		if err != nil {
			continue // the Rubrics page says what is wrong with it
		}
		ev := config.JudgeWith(r.Name)
		out = append(out, templates.EvaluatorOption{
			Name:    string(ev),
			Label:   r.Name,
			About:   "your rubric: " + strings.Join(rubricMetrics(*r), ", "),
			Judge:   true,
			Saved:   true,
			Checked: contains(chosen, string(ev)),
			Prompt:  judge.Prompt(*r),
		})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
