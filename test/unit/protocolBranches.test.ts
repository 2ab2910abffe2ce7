/**
 * Which adapter serves an agent is chosen in one place, the adapter factory (src/adapters/): no other file of
 * src/ branches on `protocol === 'acp' | 'rpc'` (or `!==`; a new session opening warm is the session's
 * `sessionsShareProcess`, not its protocol). The compatibility check's rows may (they are per protocol),
 * not its host, which starts agents through the factory.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths';

const BRANCH = /\bprotocol\s*[!=]==\s*'(acp|rpc)'/;
/** Checking a user's --protocol value is not a branch on the adapter. */
const VALIDATION = /protocol !== 'acp' && protocol !== 'rpc'( && protocol !== 'agent-service')?\) (return usage\(|fail\(|throw new Error\()/;
const ALLOWED = ['src/adapters/', 'src/check/checkHandshake.ts', 'src/check/checkRun.ts', 'src/check/checkTurns.ts'];

test("no protocol === or !== 'acp' | 'rpc' outside the adapter factory (and the check's per-protocol rows)", () => {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(repoRoot, 'src'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const rel = path.relative(repoRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (ALLOWED.some((prefix) => rel.startsWith(prefix))) continue;
    readFileSync(path.join(repoRoot, rel), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (BRANCH.test(line) && !VALIDATION.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, [], `protocol branches outside src/adapters/:\n${found.join('\n')}`);
});
