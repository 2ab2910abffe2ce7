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
# the downloads overlap (about 3 minutes instead of 6). Their lines are prefixed; any failure fails setup, and
# setup's last line names the part that failed and why: "[setup] FAILED after 46 s: code-server and Chromium
# (scripts/setup-vscode.sh): apt: /var/lib/dpkg/lock-frontend is held by process 812 (unattended-upgr), …".
reasons="$(mktemp -d)"
trap 'rm -rf "$reasons"' EXIT
npm_deps() {
  # npm ci when node_modules is missing or older than the lockfile.
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null || { echo "npm ci failed (its errors are above)" >"$reasons/npm"; return 1; }
    log "npm ci done"
  fi
}
start=$SECONDS
npm_deps & deps=$!
# shellcheck disable=SC2086 # SETUP_AGENTS: a list of words
SETUP_REASON_FILE="$reasons/agents" bash scripts/setup-agents.sh ${SETUP_AGENTS:-} & agents=$!
vscode=""
if [ -z "${SKIP_VSCODE:-}" ]; then SETUP_REASON_FILE="$reasons/vscode" bash scripts/setup-vscode.sh & vscode=$!; fi

# Progress: every 10 s, which parts are still running.
progress_wait "$start" "[setup]" installing npm-dependencies="$deps" agents="$agents" ${vscode:+code-server="$vscode"}

# check <name> <pid> <reason file>: a part that failed goes in `failed` with its reason (else its exit status).
failed=()
check() {
  local status=0
  wait "$2" || status=$?
  [ "$status" -eq 0 ] && return 0
  local reason
  reason="$(cat "$3" 2>/dev/null)" || true
  failed+=("$1: ${reason:-exited with status $status (its errors are above)}")
}
check "npm dependencies (npm ci)" "$deps" "$reasons/npm"
check "agents (scripts/setup-agents.sh)" "$agents" "$reasons/agents"
[ -z "$vscode" ] || check "code-server and Chromium (scripts/setup-vscode.sh)" "$vscode" "$reasons/vscode"
n=${#failed[@]}
if [ "$n" -gt 0 ]; then
  for f in "${failed[@]:0:n-1}"; do log "FAILED: $f"; done
  log "FAILED after $((SECONDS - start)) s: ${failed[n - 1]}"
  exit 1
fi
[ $((SECONDS - start)) -ge 5 ] && log "done in $((SECONDS - start)) s"
exit 0
