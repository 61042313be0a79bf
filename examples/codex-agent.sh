#!/bin/sh
# Runs OpenAI's Codex CLI as an assay command agent:
#
#   agent:
#     type: command
#     command: ["examples/codex-agent.sh"]
#     env:
#       OPENAI_API_KEY: ${OPENAI_API_KEY}
#
# assay writes the condition's MCP servers to the file named by
# $ASSAY_MCP_CONFIG ({"mcpServers": {...}}) and the question to stdin (and
# $ASSAY_QUERY). Codex takes MCP servers as -c mcp_servers.<name>.* settings,
# so this turns each server into those settings, runs `codex exec` and prints
# its final message. Extra arguments go to codex (e.g. -m MODEL).
#
# Set CODEX to the program to run (default: codex).
set -eu

: "${ASSAY_MCP_CONFIG:?ASSAY_MCP_CONFIG is not set: run this from assay}"
codex=${CODEX:-codex}

# One -c setting per line, values in TOML (JSON strings, arrays and the
# inline tables built here are valid TOML).
settings=$(python3 - "$ASSAY_MCP_CONFIG" <<'PY'
import json, re, sys

def toml(v):
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k) + " = " + toml(x) for k, x in sorted(v.items())) + "}"
    return json.dumps(v)

with open(sys.argv[1]) as f:
    servers = json.load(f).get("mcpServers", {})
for name, s in sorted(servers.items()):
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        sys.exit("codex-agent.sh: MCP server %r: codex needs a name of letters, digits, _ and -" % name)
    key = "mcp_servers." + name
    if "url" in s:
        print(key + ".url=" + toml(s["url"]))
        if s.get("headers"):
            print(key + ".http_headers=" + toml(s["headers"]))
        continue
    print(key + ".command=" + toml(s["command"]))
    print(key + ".args=" + toml(s.get("args", [])))
    if s.get("env"):
        print(key + ".env=" + toml(s["env"]))
PY
)

old_ifs=$IFS
IFS='
'
for s in $settings; do
	set -- "$@" -c "$s"
done
IFS=$old_ifs

if [ -n "${ASSAY_SYSTEM_PROMPT:-}" ]; then
	set -- "$@" -c "developer_instructions=$(printf %s "$ASSAY_SYSTEM_PROMPT" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"
fi

last=$(mktemp)
trap 'rm -f "$last"' EXIT
# The question comes on stdin; "-" tells codex exec to read it from there.
"$codex" exec --skip-git-repo-check --sandbox read-only --output-last-message "$last" "$@" - >&2
cat "$last"
