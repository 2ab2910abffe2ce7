#!/usr/bin/env bash
# Sets up everything the tests and the demo need, idempotently (~2 s when all is in place):
# npm dependencies, the pinned real agents (.tools/agents), and a real VS Code (code-server + Chromium).
#
#   scripts/setup.sh                        # all of it (npm test)
#   SETUP_AGENTS="opencode" scripts/setup.sh   # only these agents (npm start: what the demo needs first)
#   SKIP_VSCODE=1 scripts/setup.sh          # without code-server/Chromium (core and agent tests only)
#
# While anything runs it says so at least every 10 s: "[setup] 40 s: still installing: agents, code-server".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[setup] %s\n' "$*"; }
# shellcheck source=scripts/lib/progress.sh
source scripts/lib/progress.sh

# The three parts are independent (only setup-vscode uses apt), so they run at once: on a fresh machine
# the downloads overlap (about 3 minutes instead of 6). Their lines are prefixed; any failure fails setup.
npm_deps() {
  # npm ci when node_modules is missing or older than the lockfile.
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    log "npm ci done"
  fi
}
start=$SECONDS
npm_deps & deps=$!
# shellcheck disable=SC2086 # SETUP_AGENTS: a list of words
bash scripts/setup-agents.sh ${SETUP_AGENTS:-} & agents=$!
vscode=""
if [ -z "${SKIP_VSCODE:-}" ]; then bash scripts/setup-vscode.sh & vscode=$!; fi

# Progress: every 10 s, which parts are still running.
progress_wait "$start" "[setup]" installing npm-dependencies="$deps" agents="$agents" ${vscode:+code-server="$vscode"}

status=0
wait "$deps" || { log "npm ci failed"; status=1; }
wait "$agents" || { log "setting up the agents failed"; status=1; }
if [ -n "$vscode" ]; then wait "$vscode" || { log "setting up code-server failed"; status=1; }; fi
[ $((SECONDS - start)) -ge 5 ] && log "done in $((SECONDS - start)) s"
exit "$status"
