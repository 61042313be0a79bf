package runner

import (
	"maps"
	"os/exec"

	"assay/runner/agent"
	"assay/runner/config"
	"assay/store"
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
		return nil, store.Errorf(store.EINVALID, "agent.command: Claude Code (%s) cannot be run: %v; %s", program[0], err, claudeCodeHowTo)
	}
	return agent.ClaudeCodeArgv(append([]string{path}, program[1:]...), a.Model), nil
}

// claudeCodeEnv is what Claude Code sees besides the base variables: its
// key and endpoint when the run names them, no traffic but the API's, and
// what agent.env sets. Without api_key_env, an ANTHROPIC_API_KEY of the
// environment is passed on; without either, Claude Code uses its login.
func (m *Manager) claudeCodeEnv(a config.Agent) (map[string]string, error) {
	env := map[string]string{
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
	}
	key, err := m.apiKey("agent.api_key_env", claudeCodeKeyEnv(a, m.opts.Getenv))
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

// claudeCodeKeyEnv names the variable of Claude Code's key, if it has one.
func claudeCodeKeyEnv(a config.Agent, getenv func(string) string) string {
	if a.APIKeyEnv == "" && getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return a.APIKeyEnv
}
