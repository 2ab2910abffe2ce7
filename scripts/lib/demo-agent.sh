#!/usr/bin/env bash
# Prints the agents `npm start` (scripts/start.sh) configures in the demo, as ONE JSON list on stdout (the default first):
#   [{"name": "...", "command": "...", "args": [...], "env": {...}, "protocol": "acp"}, …]
# With ANTHROPIC_API_KEY set: Claude Code against the real model. Otherwise: opencode (a real agent)
# against the scripted demo model, which this starts in the background (pid in "$DEMO_SCRATCH/pids",
# stopped by start.sh). See test/agents/demoAgent.ts.
# env: ROOT (the repository), DEMO_SCRATCH (state for this hook), DEMO_WORKSPACE (the demo's folder)
set -euo pipefail
: "${ROOT:?ROOT must be set}"
script="$ROOT/out/test/agents/demoAgent.js"
[ -f "$script" ] || { echo "demo-agent: $script missing (npm run build)" >&2; exit 1; }
exec node "$script"
