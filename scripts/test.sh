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

# code-server and Chromium (only the VS Code suites and two unit files need them) install in the background
# while the rest is set up and the suites that need neither run: the longest install (native modules built for
# two code-servers, about 5 min here) overlaps the build, the unit tests and the agent suites instead of coming
# before them.
mkdir -p test-artifacts
vscodeSetup=""
if [ -z "${SKIP_VSCODE:-}" ]; then
  rm -f test-artifacts/setup-vscode.reason
  SETUP_REASON_FILE="$ROOT/test-artifacts/setup-vscode.reason" bash scripts/setup-vscode.sh >test-artifacts/setup-vscode.log 2>&1 &
  vscodeSetup=$!
  vscodeStart=$SECONDS
  trap '[ -z "$vscodeSetup" ] || kill "$vscodeSetup" 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true' EXIT
fi
SKIP_VSCODE=1 bash scripts/setup.sh
# Before anything that needs code-server or Chromium: the background install has finished, or the run fails.
needVscode() {
  [ -n "$vscodeSetup" ] || return 0
  local pid=$vscodeSetup
  vscodeSetup=""
  echo "[test] waiting for code-server and Chromium (scripts/setup-vscode.sh, log: test-artifacts/setup-vscode.log)"
  if ! wait "$pid"; then
    tail -n 40 test-artifacts/setup-vscode.log >&2 || true
    echo "[test] FAIL: scripts/setup-vscode.sh: $(cat test-artifacts/setup-vscode.reason 2>/dev/null || echo 'see its log above')" >&2
    exit 1
  fi
  echo "[test] code-server and Chromium ready ($((SECONDS - vscodeStart)) s after the install began)"
}
echo "[test] building"
npm run --silent build >/dev/null
# Lint and format first: a finding fails in seconds, not after the long suites.
echo "[test] lint and format (biome)"
if ! npm run --silent lint -- --colors=off; then
  echo "[test] FAIL: lint or format (above). Formatting: run 'npm run format'; a lint finding says how to fix it." >&2
  exit 1
fi

export AGENT_HOST_REQUIRE_AGENTS=1 # a missing agent fails, never skips silently

# node's test runner in phases, each file its own process: unit tests four files at a time (mostly process
# start-up), then the agent and RPC suites three at a time (mostly waiting on agents: alone they kept the two
# cores a third busy) beside the VS Code suites in two lanes, one file at a time in each (a code-server, Chromium
# and an agent per lane on the two cores), and last the .vsix test alone (it rebuilds dist/, which the others load).
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
  needVscode
  # shellcheck disable=SC2086
  phase selected 1 $TEST_FILES
else
  # Unit files that read the installed code-servers run once they are there.
  unitVscode=(out/test/unit/inertMarkup.test.js out/test/unit/vscodeLauncher.test.js)
  unit=()
  for f in out/test/unit/*.test.js; do [[ " ${unitVscode[*]} " = *" $f "* ]] || unit+=("$f"); done
  phase unit 4 "${unit[@]}"
  # The agent suites run beside the VS Code suites' second lane, which starts once code-server is there (at once when
  # setup-vscode copied it from the machine's build cache; on a fresh machine about when the agent suites end).
  ( status=0; phase agents 3 out/test/agents/*.test.js out/test/rpc/*.test.js; echo "$status" > test-artifacts/status-agents ) &
  agentsPid=$!
  needVscode
  phase unit-vscode 2 "${unitVscode[@]}"
  # The second lane's suites count only their own processes (by pid, process tree or environment, never every
  # opencode on the machine) and use only their own scratch folders, free ports and browser (whose clipboard is its
  # own): they may run beside the agent suites and beside any other suite. The first lane's (the heaviest: axe
  # scans, the long transcript, npm installs, vscode-test, npm start; and every new file) run one at a time once the
  # agent suites are done, then that lane helps the second: both take the second lane's files from one queue.
  lane2=()
  for n in agentDefaults agentService chatQueue chatSecurity hostUi lifecycle markdownParts markdownStream permissionWithdraw reload remoteAcp rpc rpcSelection tabs traffic trust turnReview walkthrough checkpoints terminalCard history ideLookups headerGroups agentEvents mcpServers sandbox fanoutRuns chatParticipant; do
    lane2+=("out/test/vscode/$n.test.js")
  done
  vsix=out/test/vscode/vsix.test.js
  lane1=()
  for f in out/test/vscode/*.test.js; do [[ "$f" = "$vsix" || " ${lane2[*]} " = *" $f "* ]] || lane1+=("$f"); done
  queue=test-artifacts/vscode-queue
  printf '%s\n' "${lane2[@]}" >"$queue"
  take() { flock "$queue.lock" sh -c 'head -n 1 "$0"; sed -i 1d "$0"' "$queue"; }
  drain() { # drain <lane>: the queue's files, one at a time, until none is left
    local f n=0
    while f="$(take)" && [ -n "$f" ]; do
      n=$((n + 1))
      phase "$1-$n" 1 "$f"
    done
  }
  ( status=0; drain vscode-2; echo "$status" > test-artifacts/status-vscode-2 ) &
  lane2Pid=$!
  wait "$agentsPid" || true
  [ "$(cat test-artifacts/status-agents 2>/dev/null || echo 1)" = 0 ] || status=1
  phase vscode-1 1 "${lane1[@]}"
  drain vscode-1
  wait "$lane2Pid" || true
  [ "$(cat test-artifacts/status-vscode-2 2>/dev/null || echo 1)" = 0 ] || status=1
  phase vscode-vsix 1 "$vsix"
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
# Why each failed test failed, last: the end of the output is what a CI page keeps.
[ "${fail:-0}" = "0" ] || node scripts/lib/failures.mjs test-artifacts/results-*.tap || true
echo "tests: ${pass:-0} passed, ${fail:-0} failed, ${skip:-0} skipped"
# No silent skip: a test that did not run (its agent or binary missing) fails the run.
if [ "${skip:-0}" != "0" ]; then
  echo "[test] FAIL: ${skip} test(s) skipped; every test must run under npm test" >&2
  status=1
fi
exit $status
