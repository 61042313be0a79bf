package runner

import (
	"slices"

	"assay"
	"assay/config"
)

// seesToolCalls reports whether the agent's output shows the MCP tool calls
// it made, which the guards require_mcp_tool_use and require_mcp_tool_success
// judge by. The built-in agent makes the calls itself; a command agent shows
// them only as Claude Code's stream-json output with --verbose.
func seesToolCalls(a config.Agent) bool {
	if a.Type != config.AgentCommand {
		return true
	}
	i := slices.Index(a.Command, "--output-format")
	return i >= 0 && i+1 < len(a.Command) && a.Command[i+1] == "stream-json" && slices.Contains(a.Command, "--verbose")
}

// checkGuards refuses a condition with a guard when the agent's output
// cannot show what the guard judges by: every answer would break it, and
// each would be paid for again.
func checkGuards(a config.Agent, conditions []assay.Condition) error {
	if seesToolCalls(a) {
		return nil
	}
	for _, c := range conditions {
		if c.RequireMCPToolUse || c.RequireMCPToolSuccess {
			return assay.Errorf(assay.EINVALID, "conditions.%s: its guards judge the agent's MCP tool calls, and this command's "+
				"output cannot show them: run Claude Code with --output-format stream-json --verbose (or use agent.type claude_code), "+
				"or drop require_mcp_tool_use and require_mcp_tool_success", c.Name)
		}
	}
	return nil
}
