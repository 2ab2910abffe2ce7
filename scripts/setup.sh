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

# npm ci when node_modules is missing or older than the lockfile.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
bash scripts/setup-agents.sh
if [ -z "${SKIP_VSCODE:-}" ]; then bash scripts/setup-vscode.sh; fi
