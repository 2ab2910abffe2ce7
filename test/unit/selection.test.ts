/** The selection commands' vscode-free parts: prompts, code blocks, docstring splicing, test cases, test plans. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codeBlocks, fitReplacement, pickCodeBlock } from '../../src/tasks/codeBlocks';
import { bodyUnchanged, extractDocComment, spliceDocComment, stubFunction, withoutDocComment } from '../../src/tasks/docstring';
import { buildPromptParts, contextUri, displayParts, lineSpan, type CodeContext } from '../../src/tasks/promptParts';
import { casesAsList, parseTestCases } from '../../src/tasks/testCases';
import { planTests, type ProjectView } from '../../src/tasks/testFramework';
import { buildInstructions, renderTemplate, resolveAnswerLanguage, taskOf } from '../../src/tasks/templates';
import { taskAnswer } from '../../src/scriptedModel/tasks';

const PY = `def cart_total(items):
    total = 0
    for i in range(1, len(items)):
        total += items[i]["price"] * items[i]["qty"]
    return total
`;

const TS = `export function sumPrices(items: LineItem[]): number {
  let total = 0;
  for (let i = 0; i <= items.length; i++) {
    total += items[i].price * items[i].qty;
  }
  return total;
}
`;

const ctx = (text: string, languageId = 'python'): CodeContext => ({
  label: 'selection',
  filepath: '/ws/shop/pricing.py',
  range: { start: { line: 5, character: 0 }, end: { line: 10, character: 0 } },
  text,
  languageId,
});

describe('prompt templates', () => {
  it('start with the task marker, the answer language and the text-only rule', () => {
    const en = buildInstructions('fix', 'en', { file: 'a.py', lines: '1-3', languageName: 'Python', languageId: 'python' });
    assert.match(en, /^Atrium task: fix\nAnswer in English\.\n/);
    assert.match(en, /do not edit files/);
    assert.match(en, /selected Python code from a\.py \(lines 1-3\)/);
    assert.equal(taskOf(en), 'fix');
    const zh = buildInstructions('explain', 'zh', { file: 'a.py', lines: '2' });
    assert.match(zh, /Answer in Simplified Chinese/);
    assert.match(zh, /解释 a\.py（第 2 行）/);
  });

  it('a user override replaces the template but never the header', () => {
    const text = buildInstructions('explain', 'en', { file: 'x.ts' }, 'Explain {{file}} like a pirate. {{unknown}}!');
    assert.equal(text.split('\n')[0], 'Atrium task: explain');
    assert.match(text, /Explain x\.ts like a pirate\. !$/);
    assert.equal(renderTemplate('{{ a }}-{{b}}', { a: '1' }), '1-');
  });

  it('answer language: explicit setting, else the display language', () => {
    assert.equal(resolveAnswerLanguage('zh', 'en'), 'zh');
    assert.equal(resolveAnswerLanguage('auto', 'zh-cn'), 'zh');
    assert.equal(resolveAnswerLanguage('auto', 'de'), 'en');
    assert.equal(resolveAnswerLanguage(undefined, 'zh-tw'), 'zh');
  });
});

describe('prompt parts', () => {
  it('embedded context: resource blocks with a file URI and the line span', () => {
    const parts = buildPromptParts('do it', [ctx(PY), ctx('   ')], true);
    assert.equal(parts.length, 2, 'blank contexts are dropped');
    assert.deepEqual(parts[0], { type: 'text', text: 'do it' });
    assert.equal(parts[1]?.type, 'resource');
    const resource = (parts[1] as unknown as { resource: { uri: string; text: string; mimeType: string } }).resource;
    assert.equal(resource.uri, 'file:///ws/shop/pricing.py#L6-L10');
    assert.equal(resource.text, PY);
    assert.equal(resource.mimeType, 'text/x-python');
  });

  it('without embedded context: labelled fenced text, character-precise', () => {
    const parts = buildPromptParts('do it', [ctx('x = "```"\n')], false);
    assert.equal(parts[1]?.type, 'text');
    assert.equal(parts[1]?.text, '\n\nselection: /ws/shop/pricing.py (lines 6-10)\n~~~~python\nx = "```"\n\n~~~~');
  });

  it('line spans are 1-based and a selection ending at column 0 excludes that line', () => {
    assert.equal(lineSpan({ start: { line: 0, character: 3 }, end: { line: 0, character: 9 } }), '1');
    assert.equal(lineSpan({ start: { line: 2, character: 0 }, end: { line: 5, character: 0 } }), '3-5');
    assert.equal(lineSpan({ start: { line: 2, character: 0 }, end: { line: 5, character: 1 } }), '3-6');
    assert.equal(contextUri({ ...ctx('a'), range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } } }), 'file:///ws/shop/pricing.py#L1');
  });

  it('the chat shows a short label and the code as a chip, not the instructions', () => {
    const parts = displayParts('Docstring: cart_total in pricing.py', [ctx('  '), ctx(PY), { ...ctx('visible'), filepath: '/ws/other.py' }]);
    assert.deepEqual(parts, [
      { type: 'text', text: 'Docstring: cart_total in pricing.py' },
      { type: 'resource_link', uri: 'file:///ws/shop/pricing.py#L6-L10', name: 'pricing.py:6-10' },
    ]);
    assert.deepEqual(displayParts('Ask', []), [{ type: 'text', text: 'Ask' }]);
  });
});

describe('code blocks', () => {
  const answer = 'Here:\n\n```json\n{"a":1}\n```\n\n```python\ndef f():\n    return 1\n```\n\nThe loop was off by one.';

  it('finds fenced blocks with their language, ~~~ and longer fences included', () => {
    assert.deepEqual(codeBlocks(answer), [
      { lang: 'json', code: '{"a":1}' },
      { lang: 'python', code: 'def f():\n    return 1' },
    ]);
    assert.deepEqual(codeBlocks('~~~~ts\nconst a = "```";\n~~~~'), [{ lang: 'ts', code: 'const a = "```";' }]);
    assert.deepEqual(codeBlocks('```\nunclosed\nstill'), [{ lang: '', code: 'unclosed\nstill' }]);
  });

  it('picks the block in the document language (aliases too), else an unlabelled one', () => {
    assert.equal(pickCodeBlock(answer, 'python')?.code, 'def f():\n    return 1');
    assert.equal(pickCodeBlock('```ts\nlet a;\n```', 'typescript')?.code, 'let a;');
    assert.equal(pickCodeBlock('no code here', 'python'), undefined);
  });

  it('fits a replacement to the selection: trailing newline kept, dedented code re-indented', () => {
    assert.equal(fitReplacement('    a = 1\n    b = 2\n', 'a = 1\nb = 3'), '    a = 1\n    b = 3\n');
    assert.equal(fitReplacement('x = 1', 'x = 2\n\n'), 'x = 2');
  });
});

describe('docstrings', () => {
  it('stubs a Python function (body → ...) and drops an existing docstring', () => {
    assert.equal(stubFunction(PY, 'python'), 'def cart_total(items):\n    ...');
    const method = '    def area(self, scale: float = 1.0) -> float:\n        """Old."""\n        return self.w * self.h * scale\n';
    assert.equal(stubFunction(method, 'python'), '    def area(self, scale: float = 1.0) -> float:\n        ...');
  });

  it('stubs a TypeScript function and drops its JSDoc', () => {
    assert.equal(stubFunction(`/** Old. */\n${TS}`, 'typescript'), 'export function sumPrices(items: LineItem[]): number {\n    ...\n}');
  });

  it('splices a Python docstring under the header with the body indentation; the body is untouched', () => {
    const answer = 'def cart_total(items):\n    """Sum the cart.\n\n    Args:\n        items: lines.\n    """\n    ...';
    const doc = extractDocComment(answer, 'python');
    assert.equal(doc, '"""Sum the cart.\n\nArgs:\n    items: lines.\n"""');
    const out = spliceDocComment(PY, doc!, 'python');
    assert.equal(out.split('\n').slice(0, 7).join('\n'), 'def cart_total(items):\n    """Sum the cart.\n\n    Args:\n        items: lines.\n    """\n    total = 0');
    assert.ok(bodyUnchanged(PY, out, 'python'));
    assert.equal(withoutDocComment(out, 'python'), PY);
  });

  it('replaces an existing Python docstring, multi-line headers and methods included', () => {
    const code = '    def f(\n        a,\n        b,\n    ):\n        """Old."""\n        return a + b\n';
    const out = spliceDocComment(code, '"""New."""', 'python');
    assert.equal(out, '    def f(\n        a,\n        b,\n    ):\n        """New."""\n        return a + b\n');
  });

  it('puts JSDoc above a TypeScript function at its indentation, replacing the old comment', () => {
    const answer = '```ts\n/**\n * Sum.\n * @param items The lines.\n */\nexport function sumPrices(items: LineItem[]): number {\n    ...\n}\n```';
    const doc = extractDocComment(pickCodeBlock(answer, 'typescript')!.code, 'typescript');
    assert.equal(doc, '/**\n * Sum.\n * @param items The lines.\n */');
    const method = '  /** Old. */\n  total(): number {\n    return 1;\n  }';
    assert.equal(spliceDocComment(method, doc!, 'typescript'), '  /**\n   * Sum.\n   * @param items The lines.\n   */\n  total(): number {\n    return 1;\n  }');
    assert.ok(bodyUnchanged(TS, spliceDocComment(TS, doc!, 'typescript'), 'typescript'));
  });

  it('the body check refuses a proposal that changes code', () => {
    assert.equal(bodyUnchanged(PY, PY.replace('range(1, ', 'range('), 'python'), false);
    assert.equal(bodyUnchanged(TS, `/** Doc. */\n${TS.replace('<=', '<')}`, 'typescript'), false);
    assert.equal(extractDocComment('def f():\n    ...', 'python'), undefined);
    assert.equal(extractDocComment('function f() {}', 'typescript'), undefined);
  });

  it('Go keeps // comments above', () => {
    const go = 'func Add(a, b int) int {\n\treturn a + b\n}\n';
    const doc = extractDocComment('// Add returns the sum.\nfunc Add(a, b int) int {\n\t...\n}', 'go');
    assert.equal(doc, '// Add returns the sum.');
    assert.equal(spliceDocComment(go, doc!, 'go'), `// Add returns the sum.\n${go}`);
  });
});

describe('test cases', () => {
  it('parses a ```json array with kinds and input/expected', () => {
    const cases = parseTestCases('Cases:\n```json\n[{"title":"two lines","kind":"happy","description":"d","input":"[1]","expected":2},{"name":"empty","type":"edge case"}]\n```');
    assert.deepEqual(cases, [
      { title: 'two lines', kind: 'happy', description: 'd', input: '[1]', expected: '2' },
      { title: 'empty', kind: 'edge', description: '' },
    ]);
  });

  it("accepts devchat's {happy: [...], edge: [...]} shape and bare JSON in prose", () => {
    const cases = parseTestCases('Sure! {"happy": ["adds two"], "edge_cases": [{"title": "empty"}]} Done.');
    assert.deepEqual(
      cases.map((c) => [c.title, c.kind]),
      [
        ['adds two', 'happy'],
        ['empty', 'edge'],
      ],
    );
    assert.throws(() => parseTestCases('no json here'), /no test cases/);
  });
});

describe('test framework and location', () => {
  const view = (languageId: string, source: string, files: Record<string, string>): ProjectView => ({
    languageId,
    source,
    files: Object.keys(files),
    read: (rel) => files[rel],
  });

  it('pytest from the reference file; the new file sits next to it', () => {
    const plan = planTests(
      view('python', 'shop/pricing.py', {
        'shop/pricing.py': '',
        'tests/test_format.py': 'import pytest\n\ndef test_x():\n    pass\n',
        'pyproject.toml': '[project]\n',
      }),
    );
    assert.deepEqual(plan, { framework: 'pytest', confident: true, reference: 'tests/test_format.py', testPath: 'tests/test_pricing.py', importPath: 'shop.pricing' });
  });

  it('unittest when the reference uses TestCase; pytest from pyproject alone', () => {
    assert.equal(planTests(view('python', 'a.py', { 'test_b.py': 'import unittest\nclass T(unittest.TestCase): pass' })).framework, 'unittest');
    const p = planTests(view('python', 'pkg/a.py', { 'pyproject.toml': '[tool.pytest.ini_options]\n' }));
    assert.equal(p.framework, 'pytest');
    assert.equal(p.testPath, 'pkg/test_a.py');
  });

  it('node:test from the reference import; tests beside the sources', () => {
    const plan = planTests(
      view('typescript', 'src/cart.ts', {
        'src/cart.ts': '',
        'src/format.ts': '',
        'src/format.test.ts': "import { test } from 'node:test';",
        'package.json': '{"scripts":{"test":"node --test"}}',
      }),
    );
    assert.deepEqual(plan, { framework: 'node:test', confident: true, reference: 'src/format.test.ts', testPath: 'src/cart.test.ts', importPath: './cart' });
  });

  it('vitest or jest from package.json; a test/ folder gets the new file; unsure → not confident', () => {
    const v = planTests(view('typescript', 'src/a.ts', { 'package.json': '{"devDependencies":{"vitest":"^2"}}', 'test/b.spec.ts': 'x' }));
    assert.equal(v.framework, 'vitest');
    assert.equal(v.testPath, 'test/a.spec.ts');
    assert.equal(v.importPath, '../src/a');
    assert.equal(planTests(view('javascript', 'a.js', { 'package.json': '{"devDependencies":{"jest":"29"}}' })).framework, 'jest');
    const unsure = planTests(view('typescript', 'src/a.ts', { 'package.json': '{}' }));
    assert.equal(unsure.confident, false);
    assert.equal(unsure.framework, undefined);
    assert.equal(planTests(view('typescript', 'src/a.ts', {}), 'mocha').confident, true);
  });
});

describe('the scripted model answers selection prompts', () => {
  const prompt = (task: Parameters<typeof buildInstructions>[0], lang: 'en' | 'zh', vars: Record<string, string>, code: string, languageId: string) =>
    [buildInstructions(task, lang, vars), `[/ws/file.${languageId === 'python' ? 'py' : 'ts'}:1]`, code].join('\n');

  it('a docstring that splices back with the body unchanged (Python en, TypeScript zh)', () => {
    const py = taskAnswer(prompt('docstring', 'en', { languageId: 'python', stub: stubFunction(PY, 'python') }, PY, 'python'));
    const pyDoc = extractDocComment(pickCodeBlock(py!.text, 'python')!.code, 'python');
    assert.match(pyDoc!, /^"""Compute the total price[\s\S]*Args:\n {4}items: [\s\S]*Returns:/);
    assert.ok(bodyUnchanged(PY, spliceDocComment(PY, pyDoc!, 'python'), 'python'));
    const ts = taskAnswer(prompt('docstring', 'zh', { languageId: 'typescript', stub: stubFunction(TS, 'typescript') }, TS, 'typescript'));
    const tsDoc = extractDocComment(pickCodeBlock(ts!.text, 'typescript')!.code, 'typescript');
    assert.match(tsDoc!, /^\/\*\*\n \* 计算购物车中所有行的总价[\s\S]* \* @param items [\s\S]* \* @returns /);
  });

  it('a fix and an optimization of the selection', () => {
    const fix = taskAnswer(prompt('fix', 'en', {}, PY, 'python'))!;
    assert.match(pickCodeBlock(fix.text, 'python')!.code, /for i in range\(len\(items\)\):/);
    assert.match(fix.text, /```\n\n- The loop started at index 1 and skipped the first element/);
    const opt = taskAnswer(prompt('optimize', 'en', {}, TS, 'typescript'))!;
    assert.match(pickCodeBlock(opt.text, 'typescript')!.code, /return items\.reduce\(\(sum, item\) => sum \+ item\.price \* item\.qty, 0\);/);
  });

  it('a quick fix follows the diagnostic the editor reported', () => {
    const code = 'export function money(value: number): string {\n  return value;\n}';
    const vars = { languageId: 'typescript', diagnosticText: `\nThe editor reports this problem there: "Type 'number' is not assignable to type 'string'.".` };
    const fix = taskAnswer(prompt('fix', 'en', vars, code, 'typescript'))!;
    assert.equal(pickCodeBlock(fix.text, 'typescript')!.code, code.replace('return value;', 'return value.toFixed(2);'));
    assert.match(fix.text, /promises a `string` but returned the number `value`/);
    // Without the diagnostic there is nothing to fix.
    assert.equal(pickCodeBlock(taskAnswer(prompt('fix', 'en', { languageId: 'typescript' }, code, 'typescript'))!.text, 'typescript')!.code, code);
  });

  it('3 happy + 3 edge cases, then a pytest / node:test file covering the chosen ones', () => {
    const casesText = taskAnswer(prompt('testCases', 'en', { symbolName: 'cart_total', symbolKind: 'function' }, PY, 'python'))!.text;
    const cases = parseTestCases(casesText);
    assert.equal(cases.filter((c) => c.kind === 'happy').length, 3);
    assert.equal(cases.filter((c) => c.kind === 'edge').length, 3);
    const vars = {
      symbolName: 'cart_total',
      symbolKind: 'function',
      framework: 'pytest',
      importPath: 'shop.pricing',
      testPath: 'tests/test_pricing.py',
      cases: JSON.stringify(cases.slice(0, 4)),
      languageId: 'python',
    };
    const code = pickCodeBlock(taskAnswer(buildInstructions('testCode', 'en', vars))!.text, 'python')!.code;
    assert.match(code, /^import pytest\n\nfrom shop\.pricing import cart_total\n/);
    assert.equal(code.match(/^def test_/gm)?.length, 4);
    assert.match(code, /assert cart_total\(\[\]\) == pytest\.approx\(0\)/);
    const tsVars = { ...vars, symbolName: 'sumPrices', framework: 'node:test', importPath: './cart', languageId: 'typescript' };
    const tsCode = pickCodeBlock(taskAnswer(buildInstructions('testCode', 'zh', tsVars))!.text, 'typescript')!.code;
    assert.match(tsCode, /^import \{ describe, it \} from 'node:test';\nimport assert from 'node:assert\/strict';\nimport \{ sumPrices \} from '\.\/cart';/);
  });

  it('answers the last task when a cancelled prompt precedes it in the same user turn', () => {
    const both = `${prompt('explain', 'en', {}, PY, 'python')}\n${prompt('fix', 'en', {}, TS, 'typescript')}`;
    assert.equal(taskAnswer(both)?.task, 'fix');
    assert.match(taskAnswer(both)!.text, /i < items\.length/);
  });

  it('ignores prompts without the marker', () => {
    assert.equal(taskAnswer('Explain this code'), undefined);
  });
});

it('casesAsList: the proposed cases as lines one reads, happy paths first', () => {
  const list = casesAsList([
    { title: 'empty', kind: 'edge', description: 'no words', input: "''", expected: '0' },
    { title: 'two words', kind: 'happy', description: 'two words', input: "'a b'", expected: '2' },
  ]);
  assert.equal(list, "Happy paths:\n• two words  ('a b' → 2)\nEdge cases:\n• empty — no words  ('' → 0)");
});
