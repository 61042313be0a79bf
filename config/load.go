package config

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"assay"
)

// DefaultKeyEnv names the variable of OpenAI's key, assumed for an agent or
// judge that names neither a base_url nor a variable.
const DefaultKeyEnv = "OPENAI_API_KEY"

// The defaults of keys a file may leave out.
const (
	defaultRepetitions    = 3   // k-eval's default
	defaultMaxConcurrent  = 5   //
	defaultMaxAttempts    = 3   //
	defaultMaxTurns       = 20  // agent tool-loop turns per answer
	defaultAgentTimeout   = 300 // seconds for one answer, all turns
	defaultJudgeTimeout   = 120 // seconds for one judge call
	defaultJudgeSeed      = 42  //
	defaultCodeTimeout    = 10  // seconds for one test run
	defaultBackoffSeconds = 1.0
	defaultBackoffFactor  = 2.0
)

// Load reads and checks the config file at path; see Parse. A nil getenv
// means os.Getenv.
func Load(path string, getenv func(string) string, opts ...Option) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > maxConfigBytes {
		return nil, &FieldError{File: path, Err: fmt.Errorf("the file is over %d MiB: is it a run file?", maxConfigBytes>>20)}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path, filepath.Dir(abs), getenv, opts...)
}

// maxConfigBytes bounds a run file: ten thousand conditions fit.
const maxConfigBytes = 4 << 20

// Parse decodes and checks a config file's bytes. filename names the file in
// error messages; dir is the folder relative paths are resolved against.
// ${...} references outside mcp_servers are expanded with getenv (nil means
// os.Getenv). The error, if any, joins one *FieldError per problem, in the
// order of the file.
func Parse(data []byte, filename, dir string, getenv func(string) string, opts ...Option) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", cmp.Or(filename, "config"), err)
	}
	if len(root.Content) == 0 {
		return nil, &FieldError{File: filename, Err: fmt.Errorf("the file is empty")}
	}
	doc := root.Content[0]
	c, d := build(doc, filename, dir, getenv)
	d.addSaved(c, opts)
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	if errs := check(c, filename, d.lines); len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	c.refs = d.refs
	return c, nil
}

// ParseSettings decodes the settings of a run whose dataset and conditions
// come from the database (a run launched through the API): a run file's
// keys but dataset and conditions, checked by the same rules.
func ParseSettings(data []byte, name string, getenv func(string) string, opts ...Option) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := Defaults()
	if len(root.Content) == 0 {
		return c, nil
	}
	c, d := build(root.Content[0], name, "", getenv)
	d.addSaved(c, opts)
	for _, key := range []string{"dataset", "conditions", "mcp_servers"} {
		if line, ok := d.lines[key]; ok {
			d.errs = append(d.errs, &FieldError{File: name, Line: line, Key: key,
				Err: fmt.Errorf("not here: a run launched this way names its dataset and stored conditions beside its settings")})
		}
	}
	if len(d.errs) > 0 {
		return nil, joinSorted(d.errs)
	}
	k := &checker{file: name, lines: d.lines}
	k.settings(c)
	if len(k.errs) > 0 {
		return nil, joinSorted(k.errs)
	}
	c.refs = d.refs
	return c, nil
}

// build decodes doc over the defaults and completes what depends on the
// file as a whole.
func build(doc *yaml.Node, filename, dir string, getenv func(string) string) (*Config, *decoder) {
	c := Defaults()
	d := &decoder{file: filename, dir: dir, getenv: getenv, lines: map[string]int{}, refs: map[string]ref{}, assertions: &c.Assertions}
	d.decode(doc, reflect.ValueOf(c).Elem(), "", expand)
	c.Dir = dir
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
	}
	c.completeAgent()
	c.completeJudges(d)
	c.completeModels()
	c.resolvePaths(dir)
	return c, d
}

// completeAgent gives the agent what follows from the rest of it: its
// type's current name, no turns of assay's for a program, its first model,
// the variable of its provider's key.
func (c *Config) completeAgent() {
	if c.Agent.Type == AgentClaudeCodeSDK {
		c.Agent.Type = AgentClaudeCode
	}
	if c.Agent.Type.RunsProgram() {
		c.Agent.MaxTurns = 0 // a program runs its own loop; assay's would only mislead the report
	}
	// agent.model beside agent.models is the first of the models, unless
	// the list names it already.
	if m := c.Agent.Model; m != "" && len(c.Agent.Models) > 0 &&
		!slices.ContainsFunc(c.Agent.Models, func(am AgentModel) bool { return am.Model == m || am.Name == m }) {
		c.Agent.Models = append([]AgentModel{{Model: m}}, c.Agent.Models...)
	}
	if len(c.Agent.Models) > 0 {
		c.Agent.Model = c.Agent.Models[0].Model // what reads one model reads the first
	}
	if (c.Agent.Type == AgentOpenAI || c.Agent.Type == AgentAnthropic) && c.Agent.BaseURL == "" && c.Agent.APIKeyEnv == "" {
		p, _, _ := c.Agent.Resolve()
		c.Agent.APIKeyEnv = keyEnvOf(p)
	}
}

// completeJudges gives each judge of a panel its defaults (a seed unless
// the file set one, a timeout, its model's name), the panel's first as
// the run's judge, and each judge at a provider's API its key's variable.
func (c *Config) completeJudges(d *decoder) {
	for i := range c.Judges {
		j := &c.Judges[i]
		if _, set := d.lines[fmt.Sprintf("judges[%d].seed", i)]; !set {
			j.Seed = defaultJudgeSeed
		}
		if j.TimeoutSeconds == 0 {
			j.TimeoutSeconds = defaultJudgeTimeout
		}
		if j.Name == "" {
			j.Name = j.Model
		}
	}
	if len(c.Judges) > 0 {
		c.Judge = c.Judges[0] // what reads one judge reads the panel's first
	}
	for _, j := range append([]*Judge{&c.Judge}, pointers(c.Judges)...) {
		if j.BaseURL == "" && j.APIKeyEnv == "" {
			p, _, _ := j.Resolve()
			j.APIKeyEnv = keyEnvOf(p)
		}
	}
}

// completeModels reaches each of the agent's models as the agent is,
// unless it says otherwise; one at OpenAI's API without a key variable
// reads OpenAI's.
func (c *Config) completeModels() {
	for i := range c.Agent.Models {
		m := &c.Agent.Models[i]
		if m.Name == "" {
			m.Name = m.Model
		}
		own := m.BaseURL != ""
		if !own {
			m.BaseURL = c.Agent.BaseURL
		}
		if m.APIKeyEnv == "" {
			switch {
			case own:
			case m.BaseURL != "":
				m.APIKeyEnv = c.Agent.APIKeyEnv
			default:
				p, _, _ := c.Agent.WithModel(*m).Resolve()
				m.APIKeyEnv = keyEnvOf(p)
			}
		}
	}
}

// resolvePaths finds the dataset, the MCP servers' programs and a command
// agent's program beside the file when their paths are relative
// ("./my-agent.sh"); a bare program name is looked up in PATH.
func (c *Config) resolvePaths(dir string) {
	c.Dataset.Path = resolvePath(dir, c.Dataset.Path)
	for i, s := range c.MCPServers {
		if strings.Contains(s.Command, "/") {
			c.MCPServers[i].Command = resolvePath(dir, s.Command)
		}
	}
	if len(c.Agent.Command) > 0 && strings.Contains(c.Agent.Command[0], "/") {
		c.Agent.Command[0] = resolvePath(dir, c.Agent.Command[0])
	}
}

// Defaults returns the config of an empty file: the one table of defaults,
// which the run form starts from too. The key of the OpenAI API
// (OPENAI_API_KEY) is only assumed for agents and judges without a base_url,
// so that key is never sent to another server unless a file says so.
func Defaults() *Config {
	return &Config{
		Agent: Agent{MaxTurns: defaultMaxTurns, TimeoutSeconds: defaultAgentTimeout},
		Judge: Judge{Seed: defaultJudgeSeed, TimeoutSeconds: defaultJudgeTimeout},
		Execution: Execution{
			NumRepetitions: defaultRepetitions,
			MaxConcurrent:  defaultMaxConcurrent,
			Retry: Retry{
				MaxAttempts:           defaultMaxAttempts,
				InitialBackoffSeconds: defaultBackoffSeconds,
				BackoffMultiplier:     defaultBackoffFactor,
			},
		},
		JudgeSampleRate:  1,
		JudgeRepetitions: 1,
		CodeExecution:    CodeExecution{TimeoutSeconds: defaultCodeTimeout},
	}
}

// resolvePath makes a relative path relative to dir. A path still holding a
// ${...} reference (an MCP server's, resolved at run start) is left alone.
func resolvePath(dir, p string) string {
	if p == "" || dir == "" || filepath.IsAbs(p) || strings.Contains(p, "${") {
		return p
	}
	return filepath.Join(dir, p)
}

// Conditions returns the conditions in file order, each with its MCP servers
// looked up by name. Server values keep their ${...} references; see
// ResolveMCPServer.
func (c *Config) Conditions() []assay.Condition {
	servers := make(map[string]MCPServer, len(c.MCPServers))
	for _, s := range c.MCPServers {
		servers[s.Name] = s
	}
	out := make([]assay.Condition, 0, len(c.ConditionSpecs))
	for _, spec := range c.ConditionSpecs {
		cond := assay.Condition{
			Name:                  spec.Name,
			SystemPrompt:          spec.SystemPrompt,
			MCPServers:            []assay.MCPServer{},
			RequireMCPToolUse:     spec.RequireMCPToolUse,
			RequireMCPToolSuccess: spec.RequireMCPToolSuccess,
		}
		for _, name := range spec.MCPServers {
			if s, ok := servers[name]; ok {
				cond.MCPServers = append(cond.MCPServers, s.store())
			}
		}
		out = append(out, cond)
	}
	return out
}

// store copies s into the domain type, sharing nothing with the config.
func (s MCPServer) store() assay.MCPServer {
	return assay.MCPServer{
		Name:      s.Name,
		Transport: s.Type,
		Command:   s.Command,
		Args:      slices.Clone(s.Args),
		Env:       maps.Clone(s.Env),
		URL:       s.URL,
		Headers:   maps.Clone(s.Headers),
	}
}

// EvaluatorsFor returns the evaluators of the run: those the file names, or
// else the defaults of the dataset's kind, which is dataset.kind when set
// and detected otherwise.
func (c *Config) EvaluatorsFor(detected assay.Kind) []Evaluator {
	if len(c.Evaluators) > 0 || len(c.Assertions) > 0 { // a file with assertions alone wants them alone
		return slices.Clone(c.Evaluators)
	}
	return DefaultEvaluators(cmp.Or(c.Dataset.Kind, detected))
}

// PriceList returns the prices of the file by model name.
func (c *Config) PriceList() []assay.Price {
	out := make([]assay.Price, 0, len(c.Prices))
	for _, model := range slices.Sorted(maps.Keys(c.Prices)) {
		p := c.Prices[model]
		out = append(out, assay.Price{Model: model, InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok})
	}
	return out
}

// Option changes how a run file is read.
type Option func(*options)

type options struct {
	saved func(name string) (*Rubric, error)
}

// SavedRubrics lets an evaluators item {judge: NAME} name a rubric saved on
// the Rubrics page when the file's rubrics has none of that name: lookup
// returns it, nil when there is none. The run's config keeps a copy.
func SavedRubrics(lookup func(name string) (*Rubric, error)) Option {
	return func(o *options) { o.saved = lookup }
}

// addSaved copies into c each saved rubric its evaluators name and its
// rubrics do not define.
func (d *decoder) addSaved(c *Config, opts []Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.saved == nil {
		return
	}
	for i, ev := range c.Evaluators {
		name, ok := ev.Rubric()
		if !ok {
			continue
		}
		if _, defined := c.RubricNamed(name); defined {
			continue
		}
		p := fmt.Sprintf("evaluators[%d].judge", i)
		r, err := o.saved(name)
		switch {
		case err != nil:
			d.fail(d.lines[fmt.Sprintf("evaluators[%d]", i)], p, "the saved rubric %q: %v", name, err)
		case r != nil:
			c.Rubrics = append(c.Rubrics, *r)
		}
	}
}

func pointers[T any](list []T) []*T {
	out := make([]*T, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

// readBounded reads the file at path, refusing one past limit bytes
// without reading further.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is over %d KiB", filepath.Base(path), limit>>10)
	}
	return data, nil
}

// JudgeKeys are the run file's keys a run judged again may set: who
// judges, how often and what. Everything else is its source run's.
var JudgeKeys = []string{"judge", "judges", "panel", "judge_repetitions", "evaluators", "rubrics"}

// ParseJudge decodes a judge file: a run file's JudgeKeys, and no other
// key, checked by the same rules. It returns the keys the file sets.
func ParseJudge(data []byte, name string, getenv func(string) string, opts ...Option) (*Config, []string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode || len(root.Content[0].Content) == 0 {
		return nil, nil, &FieldError{File: name, Err: fmt.Errorf("want the judge's keys (%s)", strings.Join(JudgeKeys, ", "))}
	}
	var keys []string
	var errs []error
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i]
		if !slices.Contains(JudgeKeys, k.Value) {
			errs = append(errs, &FieldError{File: name, Line: k.Line, Key: k.Value,
				Err: fmt.Errorf("not a judge's key: a run judged again keeps its source's answers and settings, and takes only %s", strings.Join(JudgeKeys, ", "))})
			continue
		}
		keys = append(keys, k.Value)
	}
	if len(errs) > 0 {
		return nil, nil, joinSorted(errs)
	}
	c, d := build(doc, name, "", getenv)
	d.addSaved(c, opts)
	if len(d.errs) > 0 {
		return nil, nil, joinSorted(d.errs)
	}
	k := &checker{file: name, lines: d.lines}
	k.rubrics(c)
	k.judge(c)
	k.scoring(c)
	if len(k.errs) > 0 {
		return nil, nil, joinSorted(k.errs)
	}
	c.refs = d.refs
	return c, keys, nil
}

// WithJudge is a stored run config (references as written) with the
// judge keys a judge file set (ParseJudge) taken from it, references as
// written there. A single judge replaces a panel.
func (c *Config) WithJudge(judge *Config, keys []string) (*Config, error) {
	raw, err := judge.Redacted()
	if err != nil {
		return nil, err
	}
	from, err := Stored(raw)
	if err != nil {
		return nil, err
	}
	out := c.clone()
	for _, k := range keys {
		switch k {
		case "judge":
			out.Judge = from.Judge
			if !slices.Contains(keys, "judges") {
				out.Judges = nil
			}
		case "judges":
			out.Judges = from.Judges
		case "panel":
			out.PanelMode = from.PanelMode
		case "judge_repetitions":
			out.JudgeRepetitions = from.JudgeRepetitions
		case "evaluators":
			out.Evaluators = from.Evaluators
		case "rubrics":
			out.Rubrics = from.Rubrics
		}
	}
	return out, nil
}
