#!/usr/bin/env bash
# The "VS Code executable" of the offline test configurations in .vscode-test.mjs (useInstallation.fromPath):
# takes the desktop `code` arguments @vscode/test-electron passes and runs the extension tests in code-server +
# headless Chromium instead (test/vscode/launcher.ts, compiled to out/ by `npm run build`).
#   AGENT_HOST_CODE_SERVER=current|min picks the code-server (scripts/setup-vscode.sh installs both).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
launcher="$ROOT/out/test/vscode/launcher.js"
if [ ! -f "$launcher" ]; then
  echo "vscode-test-launcher: $launcher is missing: run npm run build" >&2
  exit 2
fi
exec node "$launcher" "$@"
