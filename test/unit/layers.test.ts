/**
 * The tree's layering (docs/architecture.md "Layout"), checked by scripts/check-layers.mjs on every run of the suite: it holds
 * on the tree, and a breach of each rule planted in a scratch copy of the tree makes the check fail naming it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot, scratchDir } from '../support/paths';

function runCheck(root: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'check-layers.mjs')], { encoding: 'utf8' });
  return { status: r.status, output: r.stdout + r.stderr };
}

test('imports follow the floors, no cycles between folders, no class tests on sessions, no file over 500 lines', () => {
  const r = runCheck(repoRoot);
  assert.equal(r.status, 0, r.output);
});

describe('a planted breach fails the check', () => {
  const scratches: string[] = [];
  after(() => {
    for (const s of scratches) rmSync(s, { recursive: true, force: true });
  });

  /** A scratch copy of what the check reads: src, webview-ui/src and the script itself. */
  function copyTree(): string {
    const root = scratchDir('layers');
    scratches.push(root);
    for (const part of ['src', path.join('webview-ui', 'src'), path.join('scripts', 'check-layers.mjs')]) {
      cpSync(path.join(repoRoot, part), path.join(root, part), { recursive: true });
    }
    return root;
  }
  function planted(plant: (root: string) => void): { status: number | null; output: string } {
    const root = copyTree();
    plant(root);
    return runCheck(root);
  }
  const put = (root: string, rel: string, text: string) => writeFileSync(path.join(root, rel), text);

  test('the unplanted copy passes (what fails below fails for its plant)', () => {
    const r = runCheck(copyTree());
    assert.equal(r.status, 0, r.output);
  });
  const breaches: { name: string; plant: (root: string) => void; says: RegExp }[] = [
    {
      name: 'a vscode import in src/session (type-only counts)',
      plant: (root) => put(root, 'src/session/planted.ts', "import type * as vscode from 'vscode';\nexport type Where = vscode.Uri;\n"),
      says: /src\/session\/planted\.ts: session may not import vscode/,
    },
    {
      name: 'a vscode require in src/core',
      plant: (root) => put(root, 'src/core/planted.ts', "export const editor = require('vscode');\n"),
      says: /src\/core\/planted\.ts: core may not import vscode/,
    },
    {
      name: 'an adapter imported by a view',
      plant: (root) => put(root, 'src/views/planted.ts', "import { AcpSession } from '../acp/acpSession';\nexport const adapter = AcpSession;\n"),
      says: /src\/views\/planted\.ts: views may not import acp \(\.\.\/acp\/acpSession\)/,
    },
    {
      name: 'an adapter imported by the other (acp → rpc)',
      plant: (root) => put(root, 'src/acp/planted.ts', "import { RpcSession } from '../rpc/rpcSession';\nexport const other = RpcSession;\n"),
      says: /src\/acp\/planted\.ts: acp may not import rpc/,
    },
    {
      name: 'an adapter imported by the other (rpc → acp, dynamically)',
      plant: (root) => put(root, 'src/rpc/planted.ts', "export const other = () => import('../acp/acpClient.js');\n"),
      says: /src\/rpc\/planted\.ts: rpc may not import acp/,
    },
    {
      name: 'a cycle between folders (core → session → core)',
      plant: (root) => put(root, 'src/core/planted.ts', "import type { AgentSession } from '../session/agentSession';\nexport type Held = AgentSession;\n"),
      says: /import cycle between floors: (core → session → core|session → core → session)/,
    },
    {
      name: 'a file over the 500-line limit',
      plant: (root) => put(root, 'src/core/planted.ts', 'export const line = 0;\n'.repeat(501)),
      says: /src\/core\/planted\.ts: 502 lines \(limit 500\)/,
    },
    {
      name: 'a file at the top of src/ that is not a named root',
      plant: (root) => put(root, 'src/planted.ts', "import * as vscode from 'vscode';\nexport const ok = vscode.version;\n"),
      says: /src\/planted\.ts: in no room/,
    },
    {
      name: "the CLI's root reaching vscode through a floor it may import",
      plant: (root) => appendFileSync(path.join(root, 'src/cli/main.ts'), "import '../manager/agentManager';\n"),
      says: /src\/cli\/main\.ts runs in plain Node but reaches vscode: src\/cli\/main\.ts → src\/manager\/agentManager\.ts/,
    },
    {
      name: "the CLI's root importing vscode itself",
      plant: (root) => appendFileSync(path.join(root, 'src/cli/main.ts'), "import 'vscode';\n"),
      says: /src\/cli\/main\.ts: this root may not import vscode/,
    },
    {
      name: "the extension's root importing the gateway",
      plant: (root) => appendFileSync(path.join(root, 'src/extension.ts'), "export const serve = () => import('./gateway/serve.js');\n"),
      says: /src\/extension\.ts: only the CLI's root \(src\/cli\/main\.ts\) may import the gateway/,
    },
    {
      name: 'the gateway importing an adapter',
      plant: (root) => put(root, 'src/gateway/planted.ts', "import { AcpSession } from '../acp/acpSession';\nexport const adapter = AcpSession;\n"),
      says: /src\/gateway\/planted\.ts: gateway may not import acp/,
    },
    {
      name: 'a view importing a composition root',
      plant: (root) => put(root, 'src/views/planted.ts', "import type { HostServices } from '../hostServices';\nexport type Held = HostServices;\n"),
      says: /src\/views\/planted\.ts: imports a composition root/,
    },
  ];
  for (const b of breaches) {
    test(b.name, () => {
      const r = planted(b.plant);
      assert.equal(r.status, 1, r.output);
      assert.match(r.output, b.says);
    });
  }
});
