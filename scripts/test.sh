#!/usr/bin/env bash
# `npm test`: sets up what is missing, builds, and runs every test — unit tests, the agent matrix with real
# agents, the acpx peer comparison, RPC-mode agents, and the extension inside a real VS Code — then checks
# that no process was left behind.
#
#   npm test                          # everything (CI runs this)
#   AGENTS=codex,claude npm test      # only these agents in the agent suites
#   TEST_FILES="out/test/unit/*.test.js" npm test   # a subset of compiled test files
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
echo "[test] building"
npm run --silent build >/dev/null
# Lint and format first: a finding fails in seconds, not after the long suites.
echo "[test] lint and format (biome)"
if ! npm run --silent lint -- --colors=off; then
  echo "[test] FAIL: lint or format (above). Formatting: run 'npm run format'; a lint finding says how to fix it." >&2
  exit 1
fi

export AGENT_HOST_REQUIRE_AGENTS=1 # a missing agent fails, never skips silently
mkdir -p test-artifacts

# node's test runner in phases, each file its own process: unit tests four files at a time (mostly process
# start-up), the agent and RPC suites three at a time (mostly waiting on agents: a full run kept the two cores a
# third busy), then the VS Code suites one at a time, but the agent service's beside them (code-server,
# Chromium and an agent fill both cores; the .vsix test rebuilds dist/, which the others load).
# A hung test fails after 15 minutes instead of stalling the run (the longest real one takes ~3).
status=0
rm -f test-artifacts/results*.tap test-artifacts/status-*
phase() { # name concurrency files…
  local name=$1 conc=$2
  shift 2
  local existing=()
  for f in "$@"; do [ -f "$f" ] && existing+=("$f"); done
  [ ${#existing[@]} -gt 0 ] || return 0
  echo "[test] $name: ${#existing[@]} files, $conc at a time"
  node --test --test-concurrency="$conc" --test-timeout=900000 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="test-artifacts/results-$name.tap" "${existing[@]}" || status=$?
}
if [ -n "${TEST_FILES:-}" ]; then
  # shellcheck disable=SC2086
  phase selected 1 $TEST_FILES
else
  phase unit 4 out/test/unit/*.test.js
  phase agents 3 out/test/agents/*.test.js out/test/rpc/*.test.js
  # The agent service's suite runs beside the others: it starts no agent process (its service is in the test's
  # own process) and counts none, and it mostly waits on the service's timing; done long before the .vsix test
  # rebuilds dist/.
  beside=out/test/vscode/agentService.test.js
  ( status=0; phase vscode-service 1 "$beside"; echo "$status" > test-artifacts/status-vscode-service ) &
  besidePid=$!
  others=()
  for f in out/test/vscode/*.test.js; do [ "$f" = "$beside" ] || others+=("$f"); done
  phase vscode 1 "${others[@]}"
  wait "$besidePid" || true
  [ "$(cat test-artifacts/status-vscode-service 2>/dev/null || echo 1)" = 0 ] || status=1
fi
total() { awk -v k="$1" '$1 == "#" && $2 == k {n += $3} END {print n + 0}' test-artifacts/results-*.tap 2>/dev/null || echo 0; }
pass=$(total pass)
fail=$(total fail)
skip=$(total skipped)

# Nothing may outlive the suite: agents, code-server, Chromium (its profile is under a runner's
# ah-vsc-XXXXXX scratch in the temp folder, in its --user-data-dir), our fixtures.
sleep 1
leftovers=$(ps -eo pid=,stat=,args= | awk '$2 !~ /^Z/' \
  | grep -E "$ROOT/\.tools/|$ROOT/out/test/|$ROOT/\.scratch/|agent-host-[a-z]+-[A-Za-z0-9]{6}|/ah-vsc-[A-Za-z0-9]{6}" \
  | grep -vE "grep -E|ps -eo" || true)
if [ -n "$leftovers" ]; then
  echo "[test] FAIL: processes left behind after the suite:" >&2
  echo "$leftovers" >&2
  status=1
else
  echo "[test] no process left behind"
fi
echo "tests: ${pass:-0} passed, ${fail:-0} failed, ${skip:-0} skipped"
# No silent skip: a test that did not run (its agent or binary missing) fails the run.
if [ "${skip:-0}" != "0" ]; then
  echo "[test] FAIL: ${skip} test(s) skipped; every test must run under npm test" >&2
  status=1
fi
exit $status
