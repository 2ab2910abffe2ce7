// Prints why each failed test failed, from the runs' TAP files (node's test runner writes the error, its
// expected/actual and its stack in a YAML block under each "not ok" line). `npm test` calls it last, so the end
// of a run's output (all a CI page may keep) names the failing assertion, not only the test.
//
//   node scripts/lib/failures.mjs test-artifacts/results-*.tap
import * as fs from 'node:fs';

const MAX_LINES = 40; // per failure: the error, expected/actual and the first frames of the stack
const STACK_FRAMES = 6;
const files = process.argv.slice(2).filter((f) => fs.existsSync(f));
let count = 0;
for (const file of files) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!head) continue;
    // A suite fails when one of its tests fails: only the innermost failures are printed.
    const block = [];
    let j = i + 1;
    if (lines[j]?.trim() === '---') {
      for (j++; j < lines.length && lines[j].trim() !== '...'; j++) block.push(lines[j].slice(head[1].length + 2));
    }
    if (block.some((l) => l.startsWith("failureType: 'subtestsFailed'"))) continue;
    count++;
    console.log(`[test] failure ${count}: ${head[2]} (${file})`);
    const shown = block.filter((b) => !b.startsWith('duration_ms:'));
    const stack = shown.findIndex((l) => l.startsWith('stack:'));
    if (stack >= 0) shown.splice(stack + 1 + STACK_FRAMES); // the stack's first frames are the test's own
    for (const l of shown.slice(0, MAX_LINES)) console.log(`    ${l}`);
  }
}
if (count === 0 && files.length > 0) console.log('[test] no failing test in the TAP files');
