package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"time"

	"assay/runner/agent/internal/proc"
	"assay/runner/llm"
)

// Limits of the command agent.
const (
	// DefaultCommandTimeout bounds one answer when CommandOptions.Timeout is zero.
	DefaultCommandTimeout = 300 * time.Second
	// maxCommandOutput bounds the stdout kept; past it the answer is an error.
	maxCommandOutput = llm.MaxReplyBytes
	// maxEnvEntry is Linux's limit on one NAME=value string (and on one
	// argument): a longer query reaches the command on stdin or not at all.
	maxEnvEntry = 128 << 10
	// stderrExcerpt is how much of stderr an error quotes.
	stderrExcerpt = 2048
	// commandWaitDelay bounds the wait for output pipes held open by a
	// process that left the command's process group.
	commandWaitDelay = 2 * time.Second
)

// The placeholders replaced inside the command's arguments.
const (
	PlaceholderQuery        = "{query}"
	PlaceholderSystemPrompt = "{system_prompt}"
	PlaceholderMCPConfig    = "{mcp_config}"
	// PlaceholderMCPTools is replaced by the condition's servers as Claude
	// Code names their tools: "mcp__graph,mcp__search" (empty without any).
	PlaceholderMCPTools = "{mcp_tools}"
)

// CommandOptions configure a command agent.
type CommandOptions struct {
	// Argv is the program and its arguments, run without a shell.
	Argv []string
	// Timeout bounds one answer (default 300s).
	Timeout time.Duration
	// Getenv resolves ${ENV} in the MCP config written for the command and
	// gives it the base variables (PATH, HOME, locale); nil uses os.Getenv.
	Getenv func(string) string
	// Env holds the variables the run's config sets for the command,
	// resolved. It sees no other variable of assay's.
	Env map[string]string
}

// Command runs an external agent (Claude Code, any CLI) once per task. In
// its arguments {query}, {system_prompt} and {mcp_config} are replaced by
// the prompt, the condition's system prompt and the path of a file holding
// the condition's MCP servers in the mcpServers format of Claude Code's
// --mcp-config; without {query} the prompt goes to stdin. The variables
// ASSAY_QUERY, ASSAY_SYSTEM_PROMPT and ASSAY_MCP_CONFIG carry the same
// values, each unless longer than the kernel allows (128 KiB). The
// command sees only PATH, HOME, USER, LOGNAME, SHELL, the locale, TMPDIR
// and TZ, those ASSAY_* variables and what Env sets: not the keys assay or
// its judge read. Its trimmed stdout is the answer, except that
// Claude Code's --output-format json or stream-json output is read for the
// answer, model, tokens and MCP tool calls (see answerFromOutput).
type Command struct {
	opts CommandOptions
}

var _ Agent = (*Command)(nil)

// NewCommand returns a command agent.
func NewCommand(opts CommandOptions) *Command {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCommandTimeout
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	return &Command{opts: opts}
}

// Answer runs the command for t. A non-zero exit is an error quoting the
// end of stderr; on timeout or cancel the command's whole process group is
// killed, and so is anything it left running when it exits.
func (c *Command) Answer(ctx context.Context, t Task) (*Answer, error) {
	if len(c.opts.Argv) == 0 || c.opts.Argv[0] == "" {
		return nil, errors.New("agent: command: no program given")
	}
	cfg, err := writeMCPConfig(t.Condition.MCPServers, c.opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("agent: command: %w", err)
	}
	defer os.Remove(cfg)
	var tools []string
	for _, s := range t.Condition.MCPServers {
		tools = append(tools, "mcp__"+s.Name)
	}
	r := strings.NewReplacer(PlaceholderQuery, t.Prompt, PlaceholderSystemPrompt, t.Condition.SystemPrompt,
		PlaceholderMCPConfig, cfg, PlaceholderMCPTools, strings.Join(tools, ","))
	argv := make([]string, len(c.opts.Argv))
	stdin := true
	for i, a := range c.opts.Argv {
		argv[i] = r.Replace(a)
		stdin = stdin && !strings.Contains(a, PlaceholderQuery)
	}
	extra := maps.Clone(c.opts.Env)
	if extra == nil {
		extra = map[string]string{}
	}
	for _, v := range [][2]string{{"ASSAY_QUERY", t.Prompt}, {"ASSAY_SYSTEM_PROMPT", t.Condition.SystemPrompt}, {"ASSAY_MCP_CONFIG", cfg}} {
		if len(v[0])+1+len(v[1]) < maxEnvEntry {
			extra[v[0]] = v[1]
		}
	}
	env := proc.MinimalEnv(c.opts.Getenv, extra)
	input := ""
	if stdin {
		input = t.Prompt
	}
	ans, err := c.run(ctx, argv, env, input)
	out := strings.TrimSpace(ans.Content)
	if !isClaudeOutput(out) {
		ans.Content = out
		if err != nil {
			ans.Content = ""
			return ans, err
		}
		return ans, nil
	}
	ans.Content = out
	parsed, perr := readClaudeOutput(ctx, ans, t.Condition.MCPServers)
	var model *ModelError
	switch {
	case err == nil:
		return parsed, perr
	case errors.As(perr, &model):
		return parsed, perr // Claude Code's own report of why it exited 1
	}
	parsed.Content = ""
	return parsed, err
}

// run starts argv in its own process group and waits for it under the
// timeout. The answer's Content is the raw stdout, with the time spent,
// also when the command failed or ran out of time.
func (c *Command) run(ctx context.Context, argv, env []string, input string) (*Answer, error) {
	runCtx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Env = env
	proc.Isolate(cmd)
	cmd.Cancel = func() error {
		proc.KillGroup(cmd.Process.Pid)
		return nil
	}
	pipes, err := attach(cmd, input)
	if err != nil {
		return &Answer{}, fmt.Errorf("agent: command: %w", err)
	}
	start := time.Now()
	err = cmd.Start()
	pipes.started()
	if err == nil {
		err = cmd.Wait()
		// Whatever the command left running goes with its group.
		proc.KillGroup(cmd.Process.Pid)
	}
	pipes.drain(commandWaitDelay)
	ans := &Answer{Content: pipes.stdout.String(), Latency: time.Since(start), Attempts: 1}
	switch {
	case ctx.Err() != nil:
		return ans, fmt.Errorf("agent: command %s cancelled, its process group killed: %w", argv[0], ctx.Err())
	case runCtx.Err() != nil:
		return ans, fmt.Errorf("agent: command %s timed out after %s, its process group killed: %w", argv[0], c.opts.Timeout, runCtx.Err())
	case err != nil:
		return ans, commandError(argv[0], err, pipes.stderr.String())
	case pipes.stdout.over:
		return ans, fmt.Errorf("agent: command %s wrote more than %d MiB on stdout (%w)", argv[0], maxCommandOutput>>20, llm.ErrReplyTooLarge)
	}
	return ans, nil
}

// ErrCommandFailed is wrapped by the error of a command agent that could
// not start or exited badly.
var ErrCommandFailed = errors.New("command failed")

// commandError describes a command that failed to start or exited badly.
func commandError(program string, err error, stderr string) error {
	if stderr == "" {
		stderr = "(nothing on stderr)"
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &failedCommand{fmt.Errorf("agent: command %s failed (%s): %s", program, exit.ProcessState, stderr)}
	}
	return &failedCommand{fmt.Errorf("agent: command %s: %w", program, err)}
}

// failedCommand is a command's failure, which errors.Is finds as
// ErrCommandFailed without the message saying so twice.
type failedCommand struct{ err error }

func (e *failedCommand) Error() string        { return e.err.Error() }
func (e *failedCommand) Unwrap() error        { return e.err }
func (e *failedCommand) Is(target error) bool { return target == ErrCommandFailed }

// headBuffer keeps the first max bytes written to it, drops the rest and
// says whether there was more.
type headBuffer struct {
	max  int
	b    strings.Builder
	over bool
}

// Write keeps what fits.
func (h *headBuffer) Write(p []byte) (int, error) {
	room := h.max - h.b.Len()
	if len(p) > room {
		h.over = true
	}
	if room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (h *headBuffer) String() string { return h.b.String() }

// Close does nothing: each answer's process group is gone when it returns.
func (c *Command) Close() error { return nil }
