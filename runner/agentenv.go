package runner

import (
	"maps"
	"slices"

	"assay"
	"assay/config"
)

// checkJudgeKeysKept refuses a run whose agent.env would give the agent
// under test a judge's key: a name in Claude Code's list (env: [JUDGE_KEY])
// or a value that refers to it (${JUDGE_KEY}). The agent may read the same
// variable when it is the agent's own key too.
func checkJudgeKeysKept(cfg *config.Config, getenv func(string) string) error {
	agentKey := cfg.Agent.APIKeyEnv
	if cfg.Agent.Type == config.AgentClaudeCode {
		agentKey = claudeCodeKeyEnv(cfg.Agent, getenv)
	}
	judgeKeys := judgeKeyEnvs(cfg)
	for _, name := range slices.Sorted(maps.Keys(cfg.Agent.Env)) {
		for _, ref := range config.ReferencedNames(cfg.Agent.Env[name]) {
			if slices.Contains(judgeKeys, ref) && ref != agentKey {
				return assay.Errorf(assay.EINVALID, "agent.env.%s: passes %s, the judge's key, to the agent under test; "+
					"the judges' keys never reach the agent: give the agent a variable of its own", name, ref)
			}
		}
	}
	return nil
}
