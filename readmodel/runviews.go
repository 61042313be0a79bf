package readmodel

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"assay"
	"assay/config"
	"assay/report"
	"assay/runner"
	"assay/runner/judge"
	"assay/store"
	"assay/tally"
	"assay/templates"
)

// This file turns runs into the plain view data of the run pages.

func RunRow(r tally.RunSummary) templates.RunRow {
	row := templates.RunRow{
		ID:           r.ID,
		Name:         r.Name,
		Status:       shownStatus(r.Status, r.Errors, 0),
		DatasetID:    r.DatasetID,
		Dataset:      r.DatasetName,
		Done:         r.Done,
		Total:        r.TotalTasks,
		Errors:       r.Errors,
		CostUSD:      r.CostUSD,
		Started:      "—",
		Finished:     "—",
		Imported:     r.Origin == store.OriginEEE,
		RejudgedFrom: r.RejudgedFrom,
		Tags:         r.Tags,
		Note:         r.Note,
	}
	if r.StartedAt != nil {
		row.Started = r.StartedAt.UTC().Format("2006-01-02 15:04")
	}
	if r.FinishedAt != nil {
		row.Finished = r.FinishedAt.UTC().Format("2006-01-02 15:04")
		if r.StartedAt != nil && row.Finished[:10] == row.Started[:10] {
			row.Finished = row.Finished[11:] // the same day: the time says it
		}
	}
	row.Conditions, row.Models = baseConditions(r.ConditionNames)
	return row
}

// baseConditions are a run's conditions as its list shows them: in a run
// over several models ("baseline · small", "baseline · large"), each
// condition once and how many models answered it.
func baseConditions(names []string) ([]string, int) {
	var bases, models []string
	for _, n := range names {
		base, model, ok := strings.Cut(n, " · ")
		if !ok {
			return names, 0
		}
		if !slices.Contains(bases, base) {
			bases = append(bases, base)
		}
		if !slices.Contains(models, model) {
			models = append(models, model)
		}
	}
	return bases, len(models)
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return templates.When(*t)
}

// runFacts describes a run's frozen settings. The snapshot holds the names of
// key variables, never keys.
func runFacts(sc *Scope, answered []tally.ModelUse) templates.RunFacts {
	run := sc.Run
	ds := sc.Dataset
	cfg := sc.Run.Config
	f := templates.RunFacts{
		ID:               run.ID,
		Name:             run.Name,
		Dataset:          DatasetRow(*ds),
		Repetitions:      run.Repetitions,
		AgentModel:       cfg.Agent.Model,
		AgentBaseURL:     cfg.Agent.BaseURL,
		AgentKeyEnv:      cfg.Agent.APIKeyEnv,
		AgentCommand:     strings.Join(cfg.Agent.Command, " "),
		AgentPassed:      cfg.Agent.Passed,
		AgentMaxTokens:   cfg.Agent.MaxTokens,
		JudgeBaseURL:     cfg.Judge.BaseURL,
		JudgeTemperature: cfg.Judge.Temperature,
		JudgeSeed:        cfg.Judge.Seed,
		SampleRate:       cfg.JudgeSampleRate,
		JudgeRepetitions: max(cfg.JudgeRepetitions, 1),
		Concurrency:      cfg.Execution.MaxConcurrent,
		BudgetUSD:        run.BudgetUSD,
		Unsandboxed:      cfg.CodeExecution.Unsandboxed,
		Created:          templates.When(run.CreatedAt),
		Imported:         run.Origin == store.OriginEEE,
		CreatedBy:        run.CreatedBy,
		SameFamily:       sameFamilyText(report.SameFamilies(cfg)),
		RejudgedFrom:     run.RejudgedFrom,
	}
	f.Batched = batchedText(cfg.Batch)
	if cfg.Agent.Temperature != nil {
		f.AgentTemperature = Number(*cfg.Agent.Temperature)
	}
	if len(cfg.Agent.Models) > 0 {
		f.AgentModel = modelsText(cfg.Agent.Models)
	}
	for _, c := range run.Conditions {
		f.Conditions = append(f.Conditions, c.Name)
		f.ConditionDetails = append(f.ConditionDetails, conditionDetail(c, sc.Shared))
	}
	f.PromptTemplate = runner.PromptTemplate(cfg.Prompts, ds.Kind)
	judgeFacts(&f, cfg)
	judges := []string{f.JudgeModel}
	for _, j := range f.Panel {
		judges = append(judges, j.Model)
	}
	f.Prices = runPrices(cfg, answered, judges...)
	if f.Imported && f.JudgeModel == "" && slices.ContainsFunc(cfg.Evaluators, config.Evaluator.UsesJudge) {
		f.JudgeModel = "not named in the files"
	}
	return f
}

// batchedText says which calls a run makes in batches; "" for none.
func batchedText(b *config.Batch) string {
	switch {
	case b == nil:
		return ""
	case b.Agent && b.Judge:
		return "the agent's and judge calls"
	case b.Agent:
		return "the agent's calls"
	case b.Judge:
		return "judge calls"
	}
	return ""
}

// modelsText names a run's models, each with its model id where its name differs.
func modelsText(models []config.AgentModel) string {
	var names []string
	for _, m := range models {
		if m.Name == m.Model {
			names = append(names, m.Model)
		} else {
			names = append(names, m.Name+" ("+m.Model+")")
		}
	}
	return strings.Join(names, ", ")
}

// judgeFacts describes the run's evaluators, its judge and panel: a judge
// that is never called is not worth showing.
func judgeFacts(f *templates.RunFacts, cfg *config.Config) {
	for _, ev := range cfg.Evaluators {
		f.Evaluators = append(f.Evaluators, string(ev))
		if ev.UsesJudge() {
			f.JudgeModel = cfg.Judge.Model
			if p, ok := judge.PromptOf(ev, cfg); ok {
				f.JudgePrompts = append(f.JudgePrompts, templates.JudgePrompt{Evaluator: ev.Label(), Prompt: p})
			}
		}
	}
	if len(cfg.Judges) > 1 && f.JudgeModel != "" {
		for _, j := range cfg.Judges {
			f.Panel = append(f.Panel, templates.PanelJudge{Name: j.Name, Model: j.Model, Temperature: j.Temperature, Seed: j.Seed})
		}
		f.PanelMode = cfg.Mode()
	}
}

// runPrices describes the price of each model the run called: the models
// that answered (a command agent names its own), else the configured one,
// then the judge.
func runPrices(cfg *config.Config, answered []tally.ModelUse, judges ...string) []templates.RunPrice {
	var models []string
	reported := map[string]bool{}
	for _, m := range answered {
		if m.Model != "" && !slices.Contains(models, m.Model) {
			models = append(models, m.Model)
		}
		reported[m.Model] = reported[m.Model] || m.Source == store.CostFromAgent
	}
	if len(models) == 0 && cfg.Agent.Model != "" {
		models = append(models, cfg.Agent.Model)
	}
	for _, judge := range judges {
		if judge != "" && !slices.Contains(models, judge) {
			models = append(models, judge)
		}
	}
	var out []templates.RunPrice
	for _, m := range models {
		p, key, ok := config.PriceFor(cfg.Prices, m)
		rp := templates.RunPrice{Model: m, Priced: ok, AgentReported: reported[m]}
		if ok {
			rp.InputPerMTok = p.InputPerMTok
			rp.OutputPerMTok = p.OutputPerMTok
			rp.CacheRead = p.CacheRead()
			rp.CacheWrite = p.CacheWrite()
			if key != m {
				rp.PricedAs = key
			}
		}
		out = append(out, rp)
	}
	return out
}

// RunProgress is the live part of a run page at time now.
func RunProgress(run *store.Run, sum *report.Summary, now time.Time) templates.RunProgress {
	p := templates.RunProgress{
		ID:        run.ID,
		Status:    shownStatus(run.Status, sum.Errors, judgeErrors(sum)),
		Polling:   !run.Status.Finished(),
		CanCancel: !run.Status.Finished(),
		CanResume: runner.Resumable(run.Status) && sum.Results < run.TotalTasks,
		CanRetry:  run.Status.Finished() && sum.Errors+judgeErrors(sum) > 0 && run.Origin != store.OriginEEE,
		Message:   runMessage(run, sum),
		Done:      sum.Results,
		Total:     run.TotalTasks,
		Errors:    sum.Errors,
		CostUSD:   sum.CostUSD,
		Started:   whenPtr(run.StartedAt),
		Finished:  whenPtr(run.FinishedAt),
	}
	if p.CanRetry {
		var what []string
		if sum.Errors > 0 {
			what = append(what, templates.Count(sum.Errors, "failed task"))
		}
		if n := judgeErrors(sum); n > 0 {
			what = append(what, templates.Count(n, "failed judge call"))
		}
		p.Retry = strings.Join(what, " and ")
	}
	if run.StartedAt == nil {
		p.Started = ""
	}
	if run.FinishedAt == nil {
		p.Finished = ""
	}
	perCondition := run.TotalTasks / max(len(run.Conditions), 1)
	for _, c := range sum.Conditions {
		p.JudgeErrors += c.JudgeErrors
		p.Retried += c.Retried
		p.Conditions = append(p.Conditions, templates.ConditionProgress{
			Name:        c.Name,
			Done:        c.Results,
			Total:       perCondition,
			Errors:      c.Errors,
			JudgeErrors: c.JudgeErrors,
			Retried:     c.Retried,
			CostUSD:     c.CostUSD,
		})
	}
	if run.StartedAt != nil {
		end := now
		if run.FinishedAt != nil {
			end = *run.FinishedAt
		}
		elapsed := end.Sub(*run.StartedAt)
		p.Elapsed = Duration(elapsed)
		if run.Status == store.RunRunning && p.Done > 0 && p.Done < p.Total {
			p.ETA = Duration(time.Duration(float64(elapsed) * float64(p.Total-p.Done) / float64(p.Done)))
		}
	}
	return p
}

// runMessage says why a run stopped, or what its error was.
func runMessage(run *store.Run, sum *report.Summary) string {
	switch run.Status {
	case store.RunCancelled:
		return fmt.Sprintf("Cancelled with %s of %s tasks done. Resume to do the rest; finished tasks are kept.", templates.Int(sum.Results), templates.Int(run.TotalTasks))
	case store.RunBudgetExhausted:
		return "Stopped: " + run.Message + ". No new task was started."
	case store.RunCompleted:
		var failed []string
		if sum.Errors > 0 {
			failed = append(failed, fmt.Sprintf("%s of %s agent calls", templates.Int(sum.Errors), templates.Int(sum.Results)))
		}
		if n := judgeErrors(sum); n > 0 {
			failed = append(failed, templates.Count(n, "judge call"))
		}
		msg := ""
		if strings.HasPrefix(run.Message, runner.StoppedEarly) {
			msg = fmt.Sprintf("%s The other %s tasks of the plan were not needed (see the stopping rule below).", run.Message,
				templates.Int(run.TotalTasks-sum.Results))
		}
		if len(failed) > 0 {
			msg = strings.TrimSpace(msg + " Completed with errors: " + strings.Join(failed, " and ") +
				" ended in an error, counted apart from the scores (not as zeros).")
		}
		return msg
	}
	return run.Message
}

// shownStatus is a run's status as its pages show it: a completed run some
// of whose calls failed is "completed_with_errors", in its own colour.
func shownStatus(st store.RunStatus, errors, judgeErrors int) string {
	if st == store.RunCompleted && errors+judgeErrors > 0 {
		return "completed_with_errors"
	}
	return string(st)
}

// judgeErrors counts a run's failed judge calls, under every condition.
func judgeErrors(sum *report.Summary) int {
	n := 0
	for _, c := range sum.Conditions {
		n += c.JudgeErrors
	}
	return n
}

// Duration formats an interval for people: 45s, 3m 12s, 1h 05m.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// conditionDetail describes a condition as its run kept it. A share link
// names each MCP server and its transport only: a command line, a URL or a
// header may hold what its reader should not see. Values of environment
// variables and headers are never shown.
func conditionDetail(c assay.Condition, shared bool) templates.ConditionDetail {
	d := templates.ConditionDetail{Name: c.Name, SystemPrompt: c.SystemPrompt}
	for _, s := range c.MCPServers {
		line := fmt.Sprintf("%s (%s)", s.Name, s.Transport)
		if !shared {
			if s.Transport == assay.TransportStdio {
				line += " " + strings.Join(append([]string{s.Command}, s.Args...), " ")
			} else {
				line += " " + WithoutCredentials(s.URL)
			}
			if len(s.Env) > 0 {
				line += " · env " + strings.Join(slices.Sorted(maps.Keys(s.Env)), ", ")
			}
			if len(s.Headers) > 0 {
				line += " · headers " + strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", ")
			}
		}
		d.Servers = append(d.Servers, line)
	}
	if c.RequireMCPToolUse {
		d.Guards = append(d.Guards, "requires MCP tool use")
	}
	if c.RequireMCPToolSuccess {
		d.Guards = append(d.Guards, "requires MCP tool success")
	}
	return d
}

// sameFamilyText warns of judges of the family of a model they judge.
func sameFamilyText(same []report.SameFamily) string {
	if len(same) == 0 {
		return ""
	}
	var pairs []string
	for _, f := range same {
		pairs = append(pairs, fmt.Sprintf("the judge %s and the agent's %s are both %s", f.Judge, f.Model, f.Family))
	}
	return strings.Join(pairs, "; ") + ": LLM judges tend to score their own family's answers higher (Panickssery et al. 2024). " +
		"A judge of another family, or a panel with one, guards against it; compare the panel's judges on the report."
}
