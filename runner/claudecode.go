package runner

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"assay"
	"assay/config"
	"assay/runner/agent"
)

// claudeCodeHowTo says how to get Claude Code.
const claudeCodeHowTo = "install it (npm install -g @anthropic-ai/claude-code) or give its path in agent.command"

// claudeCodeArgv finds Claude Code (agent.command, else claude on PATH)
// and returns how a task is put to it (see agent.ClaudeCodeArgv).
func claudeCodeArgv(a config.Agent) ([]string, error) {
	program := []string{"claude"}
	if len(a.Command) > 0 {
		program = a.Command
	}
	path, err := exec.LookPath(program[0])
	if err != nil {
		return nil, assay.Errorf(assay.EINVALID, "agent.command: Claude Code (%s) cannot be run: %v; %s", program[0], err, claudeCodeHowTo)
	}
	return agent.ClaudeCodeArgv(append([]string{path}, program[1:]...), a.Model), nil
}

// claudeCodeEnv is what Claude Code sees besides the base variables: Claude
// Code's own variables from the environment (claudeCodeOwn: its provider —
// Anthropic, Vertex AI, Bedrock —, region, proxies, switches), its key and
// endpoint when the run names them, no traffic but the API's, and what
// agent.env sets. Without api_key_env, an ANTHROPIC_API_KEY of the
// environment is passed on; without either, Claude Code uses its login.
// The variables that hold the judges' keys are never passed on, unless
// the agent's key is read from the same one.
func (m *Manager) claudeCodeEnv(spec *config.Config) (map[string]string, error) {
	a := spec.Agent
	env := map[string]string{
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
	}
	agentKey := claudeCodeKeyEnv(a, m.opts.Getenv)
	for _, name := range claudeCodeOwn(os.Environ(), judgeKeyEnvs(spec), agentKey) {
		if v := m.opts.Getenv(name); v != "" {
			env[name] = v
		}
	}
	key, err := m.apiKey("agent.api_key_env", agentKey, a.BaseURL)
	if err != nil {
		return nil, err
	}
	if key != "" {
		env["ANTHROPIC_API_KEY"] = key
	}
	if a.BaseURL != "" {
		env["ANTHROPIC_BASE_URL"] = a.BaseURL
	}
	set, err := m.commandEnv(a.Env)
	if err != nil {
		return nil, err
	}
	maps.Copy(env, set)
	return env, nil
}

// claudeCodeOwnPrefixes and claudeCodeOwnNames are the variables Claude
// Code reads for itself, which k-eval's Claude Agent SDK passes on.
var (
	claudeCodeOwnPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_", "VERTEX_REGION_", "AWS_", "DISABLE_"}
	claudeCodeOwnNames    = []string{"CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "NODE_EXTRA_CA_CERTS", "MAX_THINKING_TOKENS"}
)

// claudeCodeOwn are the names among environ's (NAME=value entries) that
// Claude Code reads for itself, less the judges' key variables unless the
// agent's key is read from the same one; sorted.
func claudeCodeOwn(environ []string, judgeKeys []string, agentKey string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		own := slices.Contains(claudeCodeOwnNames, name) ||
			slices.ContainsFunc(claudeCodeOwnPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
		if !own || slices.Contains(judgeKeys, name) && name != agentKey || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// judgeKeyEnvs names the variables the run's judges read their keys from.
func judgeKeyEnvs(spec *config.Config) []string {
	var out []string
	for _, j := range spec.Panel() {
		if j.APIKeyEnv != "" {
			out = append(out, j.APIKeyEnv)
		}
	}
	return out
}

// ClaudeCodePassed names the variables of this environment a run of spec
// passes on to Claude Code (see claudeCodeEnv), for its page; nil for
// another agent.
func (m *Manager) ClaudeCodePassed(spec *config.Config) []string {
	if spec.Agent.Type != config.AgentClaudeCode {
		return nil
	}
	names := claudeCodeOwn(os.Environ(), judgeKeyEnvs(spec), claudeCodeKeyEnv(spec.Agent, m.opts.Getenv))
	names = slices.DeleteFunc(names, func(n string) bool { return m.opts.Getenv(n) == "" })
	for name := range spec.Agent.Env {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// claudeCodeKeyEnv names the variable of Claude Code's key, if it has one.
func claudeCodeKeyEnv(a config.Agent, getenv func(string) string) string {
	if a.APIKeyEnv == "" && getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return a.APIKeyEnv
}
