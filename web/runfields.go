package web

import (
	"cmp"
	"math"
	"strconv"
	"strings"

	"assay"
	"assay/config"
	"assay/runner"
	"assay/templates"
)

// This file reads the fields of the new run form into a config, naming the
// field of each problem.

// fieldParser reads form fields, keeping the first problem.
type fieldParser struct{ err error }

func (p *fieldParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = assay.Errorf(assay.EINVALID, format, args...)
	}
}

// whole reads a whole number whose bounds are the run's rules (config),
// as for a run file.
func (p *fieldParser) whole(field, text string) int {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		p.fail("%s: enter a whole number.", field)
	}
	return n
}

func (p *fieldParser) integer(field, text string, lo, hi int) int {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < lo || n > hi {
		p.fail("%s: enter a whole number from %d to %d.", field, lo, hi)
	}
	return n
}

// optFloat reads a number that may be left empty, which gives def.
func (p *fieldParser) optFloat(field, text string, lo, hi, def float64) float64 {
	text = strings.TrimPrefix(strings.TrimSpace(text), "$")
	if text == "" {
		return def
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		if hi == math.MaxFloat64 {
			p.fail("%s: enter a number of at least %v, or leave it empty.", field, lo)
		} else {
			p.fail("%s: enter a number from %v to %v.", field, lo, hi)
		}
	}
	return v
}

// endpoint reads a base URL and the name of the variable holding its key.
// Whether the URL is one is the run's rule (config), as for a run file.
func (p *fieldParser) endpoint(who, baseURL, keyEnv string) (string, string) {
	baseURL, keyEnv = strings.TrimSpace(baseURL), strings.TrimSpace(keyEnv)
	if keyEnv != "" && !config.IsEnvName(keyEnv) {
		p.fail("%s API key variable: enter the name of the environment variable that holds the key (such as OPENAI_API_KEY), never the key itself.", who)
	}
	if baseURL == "" && keyEnv == "" {
		keyEnv = config.DefaultKeyEnv // OpenAI's API needs its key; other servers may need none
	}
	return baseURL, keyEnv
}

// anthropicKey is the key variable of a model that resolves to Anthropic's
// API ("anthropic/claude-…") at its own address: ANTHROPIC_API_KEY where
// the form's default OPENAI_API_KEY was left.
func anthropicKey(resolve func() (config.Provider, string, error), baseURL, keyEnv string) string {
	if p, _, err := resolve(); err == nil && p == config.ProviderAnthropic && baseURL == "" && keyEnv == config.DefaultKeyEnv {
		return config.AnthropicKeyEnv
	}
	return keyEnv
}

func (p *fieldParser) agent(a *config.Agent, f templates.RunForm) {
	if strings.TrimSpace(f.AgentTimeout) != "" {
		a.TimeoutSeconds = p.whole("Agent timeout", f.AgentTimeout)
	}
	if f.AgentType == string(config.AgentCommand) {
		p.commandAgent(a, f)
		return
	}
	a.BaseURL, a.APIKeyEnv = p.endpoint("Agent", f.AgentBaseURL, f.AgentKeyEnv)
	if a.Model = strings.TrimSpace(f.AgentModel); a.Model == "" {
		p.fail("Agent model: enter the model the agent uses, such as gpt-4o-mini.")
	}
	a.APIKeyEnv = anthropicKey(a.Resolve, a.BaseURL, a.APIKeyEnv)
	p.agentModels(a, f.AgentModelName, f.AgentModels)
	if strings.TrimSpace(f.AgentTemperature) != "" {
		t := p.optFloat("Agent temperature", f.AgentTemperature, 0, 2, 0)
		a.Temperature = &t
	}
	if strings.TrimSpace(f.AgentMaxTokens) != "" {
		a.MaxTokens = p.integer("Agent max tokens", f.AgentMaxTokens, 1, 1_000_000)
	}
}

func (p *fieldParser) judge(cfg *config.Config, f templates.RunForm) {
	j := &cfg.Judge
	j.BaseURL, j.APIKeyEnv = p.endpoint("Judge", f.JudgeBaseURL, f.JudgeKeyEnv)
	j.Model = strings.TrimSpace(f.JudgeModel)
	j.APIKeyEnv = anthropicKey(j.Resolve, j.BaseURL, j.APIKeyEnv)
	j.Temperature = p.optFloat("Judge temperature", f.JudgeTemperature, 0, 2, 0)
	if strings.TrimSpace(f.JudgeSeed) != "" {
		j.Seed = p.integer("Judge seed", f.JudgeSeed, math.MinInt32, math.MaxInt32)
	}
	cfg.JudgeSampleRate = p.optFloat("Judge sample rate", f.SampleRate, 0, 1, 1)
	if strings.TrimSpace(f.JudgeRepetitions) != "" {
		cfg.JudgeRepetitions = p.integer("Judge repetitions", f.JudgeRepetitions, 1, config.MaxJudgeRepetitions)
	}
	j.VarySeed = f.JudgeVarySeed
	p.panel(cfg, f)
}

// rubrics copies into the run's config each saved rubric the form chose
// (judge:NAME), so that the run keeps the rubric it used.
func (p *fieldParser) rubrics(cfg *config.Config, names []string, saved func(string) (*config.Rubric, error)) {
	for _, name := range names {
		rubric, ok := config.Evaluator(name).Rubric()
		if !ok {
			continue
		}
		r, err := saved(rubric)
		switch {
		case err != nil:
			p.fail("Evaluators: the rubric %s no longer reads; fix it on the Rubrics page. %v", rubric, assay.ErrorMessage(err))
		case r == nil:
			p.fail("Evaluators: the rubric %s was deleted; reload the page.", rubric)
		default:
			cfg.Rubrics = append(cfg.Rubrics, *r)
		}
	}
}

// assertions reads the Assertions box: a YAML list, as a run file's
// evaluators write assertions.
func (p *fieldParser) assertions(cfg *config.Config, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	list, err := config.ParseAssertions(text, "Assertions")
	if err != nil {
		p.fail("%s", strings.ReplaceAll(err.Error(), "\n", " · "))
		return
	}
	cfg.Assertions = list
}

// evaluators reads the chosen evaluators; config.CheckEvaluators decides
// whether they fit the dataset. Assertions alone need no evaluator.
func (p *fieldParser) evaluators(cfg *config.Config, names []string, kind assay.Kind) {
	for _, name := range names {
		cfg.Evaluators = append(cfg.Evaluators, config.Evaluator(name))
	}
	if len(cfg.Evaluators) == 0 && len(cfg.Assertions) > 0 {
		return
	}
	if err := config.CheckEvaluators(cfg.Evaluators, kind); err != nil {
		p.fail("%s.", capitalize(assay.ErrorMessage(err)))
		return
	}
	for _, ev := range cfg.Evaluators {
		if ev.UsesJudge() && cfg.Judge.Model == "" {
			p.fail("Judge model: the %s evaluator needs a judge; enter its model.", ev.Label())
		}
	}
}

// capitalize starts a message with a capital letter, as the form's do.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// prompt keeps an edited prompt template as the run's override.
func (p *fieldParser) prompt(cfg *config.Config, text string, kind assay.Kind) {
	if kind == assay.KindQA || strings.TrimSpace(text) == "" || text == runner.PromptTemplate(config.Prompts{}, kind) {
		return
	}
	if !strings.Contains(text, "{question}") {
		p.fail("Prompt template: keep {question} where the sample's input goes.")
	}
	if kind == assay.KindMCQ && !strings.Contains(text, "{choices}") {
		p.fail("Prompt template: keep {choices} where the lettered options go.")
	}
	switch kind {
	case assay.KindMCQ:
		cfg.Prompts.MCQ = text
	case assay.KindMath:
		cfg.Prompts.Math = text
	case assay.KindCode:
		cfg.Prompts.Code = text
	}
}

// commandAgent reads a command agent: its program and arguments, one per line,
// run without a shell; the model, when given, prices its answers.
func (p *fieldParser) commandAgent(a *config.Agent, f templates.RunForm) {
	a.Type = config.AgentCommand
	a.APIKeyEnv = ""
	a.MaxTurns = 0 // a program runs its own loop
	for _, line := range strings.Split(f.AgentCommand, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			a.Command = append(a.Command, line)
		}
	}
	if len(a.Command) == 0 {
		p.fail("Agent command: enter the program and its arguments, one per line, such as claude, -p, {query}.")
	}
	a.Model = strings.TrimSpace(f.AgentModel)
}

// agentModels reads the form's More models: with any, the agent's model is
// the first of a run over several, each at the agent's base URL and key.
func (p *fieldParser) agentModels(a *config.Agent, firstName, text string) {
	var more []config.AgentModel
	for _, nm := range p.namedModels("More models", text, "large: gpt-4o") {
		more = append(more, config.AgentModel{Name: nm[0], Model: nm[1]})
	}
	if len(more) == 0 {
		return
	}
	models := append([]config.AgentModel{{Name: cmp.Or(firstName, a.Model), Model: a.Model}}, more...)
	for i := range models {
		models[i].BaseURL, models[i].APIKeyEnv = a.BaseURL, a.APIKeyEnv
	}
	a.Models = models
}

// panel reads the form's More judges: with any, the judge is the first of
// a panel, each at the judge's base URL, key, temperature and seed.
func (p *fieldParser) panel(cfg *config.Config, f templates.RunForm) {
	var more []config.Judge
	for _, nm := range p.namedModels("More judges", f.JudgeMore, "second: gpt-4.1") {
		j := cfg.Judge
		j.Name, j.Model = nm[0], nm[1]
		more = append(more, j)
	}
	if len(more) == 0 {
		return
	}
	if cfg.Judge.Model == "" {
		p.fail("Judge model: a panel starts from the judge; enter its model.")
		return
	}
	first := cfg.Judge
	first.Name = first.Model
	cfg.Judges = append([]config.Judge{first}, more...)
	switch f.Panel {
	case "", config.PanelMean, config.PanelMedian, config.PanelFirst:
		cfg.PanelMode = f.Panel
	default:
		p.fail("Headline per answer: choose mean, median or first.")
	}
}

// namedModels reads a box of models, one per line, as "name: model" or the
// model alone (its own name): pairs of name and model. A bad line fails the
// form, naming the field and line, and gives none.
func (p *fieldParser) namedModels(field, text, example string) [][2]string {
	var out [][2]string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, model, named := strings.Cut(line, ": ")
		if !named {
			name, model = line, line
		}
		name, model = strings.TrimSpace(name), strings.TrimSpace(model)
		if name == "" || model == "" || strings.ContainsAny(model, " \t") {
			p.fail("%s, line %d: write name: model, or the model alone, such as %s.", field, i+1, example)
			return nil
		}
		out = append(out, [2]string{name, model})
	}
	return out
}
