// Bundles the extension host entry, the headless CLI and the chat webview (dist/webview/, with codicons).
// `--production` (vscode:prepublish, for the .vsix): minified, no source maps, dist/ emptied first so no
// map of an earlier development build is left to ship.
import * as fs from 'node:fs';
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

const builds = [
  // mainFields: jsonc-parser's UMD build requires its parts at run time (esbuild cannot follow that); its ES
  // module build bundles.
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'], mainFields: ['module', 'main'] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, mainFields: ['module', 'main'] },
  // The stdio MCP server agents start for the IDE tools (src/mcp/ideBridge.ts).
  { ...common, entryPoints: ['src/mcp/ideBridge.ts'], outfile: 'dist/ideBridge.js' },
  // The sandbox launcher (src/sandbox/launcher.ts): an ES module, as @anthropic-ai/sandbox-runtime is one (it reads
  // import.meta.url); require() for its CommonJS parts. Its seccomp helper is not shipped: the launcher allows Unix
  // sockets (docs/sandbox.md), the one thing that helper blocks.
  {
    ...common,
    format: 'esm',
    entryPoints: ['src/sandbox/launcher.ts'],
    outfile: 'dist/sandbox.mjs',
    banner: { js: "import { createRequire as __atriumRequire } from 'node:module'; const require = __atriumRequire(import.meta.url);" },
  },
  // The chat webview (src/views/chat/): a browser bundle plus its stylesheet.
  {
    ...common,
    platform: 'browser',
    target: 'chrome120',
    format: 'iife',
    entryPoints: { chat: 'webview-ui/src/main.ts', 'chat-style': 'webview-ui/src/chat.css' },
    outdir: 'dist/webview',
    entryNames: '[name]',
  },
];

if (production) fs.rmSync('dist', { recursive: true, force: true });
// The codicon font and stylesheet are served from dist/webview (the webview's only resource root).
fs.mkdirSync('dist/webview', { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(`node_modules/@vscode/codicons/dist/${f}`, `dist/webview/${f}`);

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
