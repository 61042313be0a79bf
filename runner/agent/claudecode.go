package agent

// ClaudeCodeArgv is how a task is put to Claude Code, as k-eval runs it,
// for the program (with any arguments of its own) and the model (empty:
// Claude Code's default): in print mode, the condition's system prompt and
// only its MCP servers, none of Claude Code's built-in tools, the servers'
// tools allowed without a prompt and any other use denied (a question it
// cannot ask would hang), the answer as stream-json so that its tool calls,
// tokens and cost can be read, and the question last, after "--", so that
// one starting with "-" is not taken for an option.
func ClaudeCodeArgv(program []string, model string) []string {
	argv := append([]string{}, program...)
	argv = append(argv, "-p", "--output-format", "stream-json", "--verbose",
		"--system-prompt", PlaceholderSystemPrompt,
		"--mcp-config", PlaceholderMCPConfig, "--strict-mcp-config",
		"--tools", "", "--allowedTools", PlaceholderMCPTools, "--permission-mode", "dontAsk")
	if model != "" {
		argv = append(argv, "--model", model)
	}
	return append(argv, "--", PlaceholderQuery)
}
