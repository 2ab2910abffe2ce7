#!/usr/bin/env bash
# Sets up everything the tests and the demo need, idempotently (~2 s when all is in place):
# npm dependencies, the pinned real agents (.tools/agents), and a real VS Code (code-server + Chromium).
#
#   scripts/setup.sh            # all of it
#   SKIP_VSCODE=1 scripts/setup.sh   # without code-server/Chromium (core and agent tests only)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }

# The three parts are independent (only setup-vscode uses apt), so they run at once: on a fresh machine
# the downloads overlap (about 3 minutes instead of 6). Their lines are prefixed; any failure fails setup.
npm_deps() {
  # npm ci when node_modules is missing or older than the lockfile.
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
  fi
}
npm_deps & deps=$!
bash scripts/setup-agents.sh & agents=$!
vscode=""
if [ -z "${SKIP_VSCODE:-}" ]; then bash scripts/setup-vscode.sh & vscode=$!; fi
status=0
wait "$deps" || { log "npm ci failed"; status=1; }
wait "$agents" || { log "setting up the agents failed"; status=1; }
if [ -n "$vscode" ]; then wait "$vscode" || { log "setting up code-server failed"; status=1; }; fi
exit "$status"
