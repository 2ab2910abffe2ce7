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

# One run of node's test runner, file after file (agents and VS Code are heavy on 2 cores).
# shellcheck disable=SC2086
files=${TEST_FILES:-"out/test/unit/*.test.js out/test/agents/*.test.js out/test/rpc/*.test.js out/test/vscode/*.test.js"}
existing=()
for f in $files; do [ -f "$f" ] && existing+=("$f"); done
status=0
# A hung test fails after 15 minutes instead of stalling the run (the longest real one takes ~3).
node --test --test-concurrency=1 --test-timeout=900000 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=test-artifacts/results.tap "${existing[@]}" || status=$?
pass=$(awk '/^# pass /{print $3}' test-artifacts/results.tap | tail -1)
fail=$(awk '/^# fail /{print $3}' test-artifacts/results.tap | tail -1)
skip=$(awk '/^# skipped /{print $3}' test-artifacts/results.tap | tail -1)

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
