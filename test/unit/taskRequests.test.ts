/**
 * The selection tasks over a file's text, as the CLI's `task` verb (and the editor, for agents that run the
 * tasks themselves) use them: the 1-based --range, the functions found in the text, the range a command and a
 * docstring work on, and the structured requests built from (text, path, range).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRange } from '../../src/cli/taskInput';
import { commandTarget, docstringRange, functionAt, functionsIn } from '../../src/tasks/functionsInText';
import { explainOrFixRequest, selectedRequest, testCasesRequest, testCodeRequest } from '../../src/tasks/selectionRequests';
import { languageIdOf, textIn, visibleRange } from '../../src/tasks/textRanges';

const PY = `"""Prices."""


def cart_total(items):
    total = 0
    for i in range(1, len(items)):
        total += items[i]["price"] * items[i]["qty"]
    return total


class Cart:
    @property
    def size(self):
        return len(self.items)
`;

const TS = `import type { LineItem } from './types';

export function sumPrices(items: LineItem[], opts: { round: boolean } = { round: false }): number {
  let total = 0;
  for (let i = 0; i <= items.length; i++) {
    total += items[i].price * items[i].qty; // "}" in a comment
  }
  return total;
}

/** The most expensive line of the cart. */
export const priciest = (items: LineItem[]): LineItem | undefined => {
  return [...items].sort((a, b) => b.price - a.price)[0];
};

class Shelf {
  count(label: string): number {
    return label.length;
  }
}
`;

const range = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

describe('--range (1-based, the end column exclusive)', () => {
  it('reads L1:C1-L2:C2 and L1-L2 (whole lines) as 0-based ranges', () => {
    assert.deepEqual(parseRange('4:1-8:17', PY, 'p.py'), range(3, 0, 7, 16));
    assert.equal(textIn(PY, parseRange('4:5-4:15', PY, 'p.py')), 'cart_total');
    assert.deepEqual(parseRange('4-8', PY, 'p.py'), range(3, 0, 7, 16));
    assert.deepEqual(parseRange('3:1-3:1', PY, 'p.py'), range(2, 0, 2, 0));
  });
  it('says what is wrong with a malformed range or one outside the file', () => {
    assert.throws(() => parseRange('4:1', PY, 'p.py'), /--range "4:1" is not L1:C1-L2:C2 or L1-L2/);
    assert.throws(() => parseRange('0-2', PY, 'p.py'), /line 0 is not in the file \(p\.py: lines 1 to 15\)/);
    assert.throws(() => parseRange('4:1-4:30', PY, 'p.py'), /column 30 is not on line 4 \(columns 1 to 23\)/);
    assert.throws(() => parseRange('8-4', PY, 'p.py'), /ends before it starts/);
  });
});

describe('functions found in the text', () => {
  it('Python: defs by indentation, decorators included, methods inside classes', () => {
    assert.deepEqual(
      functionsIn(PY, 'python').map((f) => [f.name, f.kind, f.range]),
      [
        ['cart_total', 'Function', range(3, 0, 7, 16)],
        ['size', 'Method', range(11, 4, 13, 30)],
      ],
    );
  });
  it('TypeScript: declarations and arrow functions to their closing brace, methods in classes; braces in parameters, strings and comments do not count', () => {
    assert.deepEqual(
      functionsIn(TS, 'typescript').map((f) => [f.name, f.kind, f.range]),
      [
        ['sumPrices', 'Function', range(2, 0, 8, 1)],
        ['priciest', 'Function', range(11, 0, 13, 1)],
        ['count', 'Method', range(16, 2, 18, 3)],
      ],
    );
  });
  it('the function at a range is the innermost one containing it; none outside functions', () => {
    assert.equal(functionAt(TS, 'typescript', range(5, 4, 5, 4))?.name, 'sumPrices');
    assert.equal(functionAt(TS, 'typescript', range(0, 0, 0, 5)), undefined);
  });
});

describe('what a command and a docstring work on', () => {
  it('an empty range is the function at the cursor, else its line; a selection ending at column 0 leaves that line out', () => {
    assert.deepEqual(commandTarget(PY, 'python', range(5, 8, 5, 8)).range, range(3, 0, 7, 16));
    assert.deepEqual(commandTarget(PY, 'python', range(0, 3, 0, 3)).range, range(0, 0, 0, 13));
    assert.deepEqual(commandTarget(PY, 'python', range(4, 0, 6, 0)).range, range(4, 0, 5, 34));
  });
  it('a docstring takes the whole function and the doc comment above it', () => {
    const fn = functionAt(TS, 'typescript', range(12, 2, 12, 8));
    assert.deepEqual(docstringRange(TS, 'typescript', range(12, 2, 12, 8), fn), range(10, 0, 13, 1));
    const method = functionAt(TS, 'typescript', range(17, 4, 17, 5));
    // No comment above: the function's first line whole, so the comment lands at its indentation.
    assert.deepEqual(docstringRange(TS, 'typescript', range(17, 4, 17, 5), method), range(16, 0, 18, 3));
    assert.deepEqual(docstringRange(PY, 'python', range(5, 0, 5, 3), functionAt(PY, 'python', range(5, 0, 5, 3))), range(3, 0, 7, 16));
  });
});

describe('structured requests from (text, path, range)', () => {
  it('explain and fix carry the selection and the code around it (± 20 lines, clipped)', () => {
    const long = `${Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;
    assert.deepEqual(visibleRange(long, range(30, 2, 31, 4)), range(10, 0, 51, 7));
    const r = explainOrFixRequest('fix', 'zh', long, '/ws/a.py', range(2, 0, 3, 6));
    assert.deepEqual(r, {
      task: 'fix',
      language: 'zh',
      selected: { filepath: '/ws/a.py', range: range(2, 0, 3, 6), text: 'line 3\nline 4' },
      visible: { filepath: '/ws/a.py', range: range(0, 0, 23, 7), text: textIn(long, range(0, 0, 23, 7)) },
    });
    assert.deepEqual(selectedRequest('optimize', 'en', long, '/ws/a.py', range(0, 0, 0, 6)), {
      task: 'optimize',
      language: 'en',
      selected: { filepath: '/ws/a.py', range: range(0, 0, 0, 6), text: 'line 1' },
    });
  });
  it('test cases: the whole file, the function, its location and its symbols; test code: the cases as JSON and where they go', () => {
    const fn = functionAt(PY, 'python', range(4, 0, 4, 0))!;
    assert.deepEqual(testCasesRequest('en', PY, '/ws/shop/pricing.py', fn), {
      task: 'testCases',
      language: 'en',
      filepath: '/ws/shop/pricing.py',
      fileContent: PY,
      funcName: 'cart_total',
      funcLocation: range(3, 0, 7, 16),
      funcSymbols: [{ name: 'cart_total', kind: 'Function', range: range(3, 0, 7, 16), children: [] }],
    });
    const cases = [{ title: 'empty cart', kind: 'edge' as const, description: 'no lines', input: '[]', expected: '0' }];
    const code = testCodeRequest('en', { cases, functionName: 'cart_total', testPath: 'tests/test_pricing.py', relevantContent: 'def cart_total(items): ...' });
    assert.deepEqual(code, {
      task: 'testCode',
      language: 'en',
      testCasesStr: JSON.stringify(cases, null, 2),
      functionName: 'cart_total',
      filePath: 'tests/test_pricing.py',
      relevantContent: 'def cart_total(items): ...',
    });
  });
  it('knows the language of a file by its name', () => {
    assert.deepEqual(['a.py', 'b.tsx', 'c.mjs', 'd.go', 'e.txt'].map(languageIdOf), ['python', 'typescriptreact', 'javascript', 'go', 'plaintext']);
  });
});
