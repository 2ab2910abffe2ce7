/**
 * The scripted model's answers to Atrium's selection-command prompts (src/tasks/templates.ts), found
 * by their first line `Atrium task: <task>`: an explanation, a documentation comment in the language's
 * convention (the stub with `...` as body, like a real model given devchat's prompt), a fixed or optimized
 * replacement, a JSON list of test cases (3 happy + 3 edge) and a test file in the requested framework.
 * English, or Chinese when the prompt asks for Simplified Chinese. Pure functions of the prompt text.
 *
 * The selection is read from the prompt as it reaches the model: a fenced block labelled `selection:` (text
 * form), or the first embedded resource, which opencode renders as a `[<path>:<line>]` line followed by the
 * text.
 */

export type SelectionTask = 'explain' | 'docstring' | 'optimize' | 'fix' | 'testCases' | 'testCode' | 'ask';

interface Prompt {
  task: SelectionTask;
  zh: boolean;
  text: string;
}

export function parseTaskPrompt(text: string): Prompt | undefined {
  // The last one: after a cancelled turn the agent sends the unanswered prompt and the new one together.
  const m = [...text.matchAll(/Atrium task: (explain|docstring|optimize|fix|testCases|testCode|ask)\b/g)].pop();
  if (!m?.[1] || m.index === undefined) return undefined;
  const rest = text.slice(m.index);
  return { task: m[1] as SelectionTask, zh: /Answer in Simplified Chinese/.test(rest.slice(0, 400)), text: rest };
}

type Lang = 'python' | 'ts';

interface Code {
  lang: Lang;
  code: string;
}

function langOf(hint: string): Lang {
  return /\bpy(thon)?\b|\.py\b/.test(hint) ? 'python' : 'ts';
}

/** The selected code: the text form's `selection:` block, else the first embedded resource. */
export function selectionOf(text: string): Code | undefined {
  const fenced = /^selection: (\S+)[^\n]*\n(`{3}|~{4})(\w*)\n([\s\S]*?)\n\2[ \t]*$/m.exec(text);
  if (fenced?.[4] !== undefined) return { lang: langOf(`${fenced[3]} ${fenced[1]}`), code: fenced[4] };
  const lines = text.split('\n');
  const header = /^\[((?:\/|[A-Za-z]:)[^\]]*?)(?::\d+(?:-\d+)?)?\]\s*$/;
  const start = lines.findIndex((l) => header.test(l));
  if (start < 0) return undefined;
  const path = header.exec(lines[start] ?? '')?.[1] ?? '';
  let end = start + 1;
  while (end < lines.length && !header.test(lines[end] ?? '')) end++;
  return {
    lang: langOf(path),
    code: lines
      .slice(start + 1, end)
      .join('\n')
      .replace(/\n+$/, ''),
  };
}

function firstFence(text: string, langs?: RegExp): { lang: string; code: string } | undefined {
  for (const m of text.matchAll(/^(`{3,}|~{3,})(\w*)\n([\s\S]*?)\n\1[ \t]*$/gm)) {
    if (!langs || langs.test(m[2] ?? '')) return { lang: m[2] ?? '', code: m[3] ?? '' };
  }
  return undefined;
}

// ------------------------------------------------------------------------------------------ signatures

interface Signature {
  name: string;
  params: string[];
  indent: string;
}

function signature(code: string, lang: Lang): Signature | undefined {
  if (lang === 'python') {
    const m = /^([ \t]*)(?:async\s+)?def\s+(\w+)\s*\(([^)]*)\)/m.exec(code);
    if (!m) return undefined;
    const params = (m[3] ?? '')
      .split(',')
      .map((p) => p.trim().replace(/^\*+/, '').split(/[:=]/)[0]?.trim() ?? '')
      .filter((p) => p && p !== 'self' && p !== 'cls');
    return { name: m[2] ?? '', params, indent: m[1] ?? '' };
  }
  const m =
    /^([ \t]*)(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*(\w+)|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?|(?:public|private|protected|static|\s)*(\w+))\s*(?:<[^>]*>)?\s*\(([^)]*)\)/m.exec(
      code,
    );
  if (!m) return undefined;
  const params = (m[5] ?? '')
    .split(',')
    .map(
      (p) =>
        p
          .trim()
          .replace(/^\.\.\./, '')
          .split(/[:=?]/)[0]
          ?.trim() ?? '',
    )
    .filter((p) => p);
  return { name: m[2] ?? m[3] ?? m[4] ?? '', params, indent: m[1] ?? '' };
}

function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase()
    .trim();
}

const PARAM_DOC: Record<string, [string, string]> = {
  items: ['The cart lines, each with a `price` and a `qty`.', '购物车中的各行，每行包含 `price` 和 `qty`。'],
  total: ['The amount before the discount.', '打折前的金额。'],
  percent: ['The discount in percent, from 0 to 100.', '折扣百分比，取值 0 到 100。'],
  name: ['The label shown before the amount.', '金额前显示的名称。'],
  value: ['The number to format.', '要格式化的数字。'],
};

function paramDoc(p: string, zh: boolean): string {
  const known = PARAM_DOC[p];
  if (known) return zh ? known[1] : known[0];
  return zh ? `参数 ${p}。` : `The ${words(p)}.`;
}

function summary(name: string, zh: boolean): string {
  if (/total|sum/i.test(name)) return zh ? '计算购物车中所有行的总价（单价乘以数量之和）。' : 'Compute the total price of the cart: the sum of price times quantity over all lines.';
  if (/discount/i.test(name)) return zh ? '按百分比折扣计算折后金额，保留两位小数。' : 'Apply a percentage discount to an amount, rounded to cents.';
  return zh ? `返回 ${name} 的结果。` : `Return the ${words(name)}.`;
}

function returnsDoc(name: string, zh: boolean): string {
  if (/total|sum/i.test(name)) return zh ? '所有行的总价；空购物车为 0。' : 'The total price; 0 for an empty cart.';
  return zh ? '计算结果。' : `The ${words(name)}.`;
}

// ------------------------------------------------------------------------------------------ answers

function docstringAnswer(p: Prompt): string {
  const stub = firstFence(p.text);
  if (!stub) return p.zh ? '没有找到要注释的函数。' : 'I could not find the function to document.';
  const lang = langOf(stub.lang);
  const sig = signature(stub.code, lang);
  if (!sig) return p.zh ? '没有找到函数签名。' : 'I could not find the function signature.';
  const raises = /\braise\b|\bthrow\b/.test(selectionOf(p.text.slice(p.text.indexOf(stub.code) + stub.code.length))?.code ?? '');
  if (lang === 'python') {
    const inner = `${sig.indent}    `;
    const lines = [`${inner}"""${summary(sig.name, p.zh)}`, ''];
    if (sig.params.length > 0) {
      lines.push(`${inner}${p.zh ? '参数' : 'Args'}:`);
      for (const param of sig.params) lines.push(`${inner}    ${param}: ${paramDoc(param, p.zh)}`);
      lines.push('');
    }
    lines.push(`${inner}${p.zh ? '返回' : 'Returns'}:`, `${inner}    ${returnsDoc(sig.name, p.zh)}`);
    if (raises) lines.push('', `${inner}${p.zh ? '异常' : 'Raises'}:`, `${inner}    ValueError: ${p.zh ? '参数超出范围时。' : 'If an argument is out of range.'}`);
    lines.push(`${inner}"""`);
    const header = stub.code.split('\n').filter((l) => l.trim() !== '...');
    return `\`\`\`python\n${[...header, ...lines, `${inner}...`].join('\n')}\n\`\`\``;
  }
  const lines = [`${sig.indent}/**`, `${sig.indent} * ${summary(sig.name, p.zh)}`, `${sig.indent} *`];
  for (const param of sig.params) lines.push(`${sig.indent} * @param ${param} ${paramDoc(param, p.zh)}`);
  lines.push(`${sig.indent} * @returns ${returnsDoc(sig.name, p.zh)}`);
  if (raises) lines.push(`${sig.indent} * @throws {RangeError} ${p.zh ? '参数超出范围时。' : 'If an argument is out of range.'}`);
  lines.push(`${sig.indent} */`);
  return `\`\`\`${stub.lang || 'typescript'}\n${lines.join('\n')}\n${stub.code}\n\`\`\``;
}

/**
 * The bugs the sample files carry, and how a model would fix them; `problem` is the diagnostic the editor
 * reported (a quick fix), e.g. a number returned where the signature promises a string.
 */
function fixCode(code: string, problem = ''): { code: string; notes: [string, string][] } {
  const notes: [string, string][] = [];
  let out = code;
  if (/Type 'number' is not assignable to type 'string'/.test(problem)) {
    out = out.replace(/\breturn (\w+);/g, (_, v: string) => {
      notes.push([
        `The function promises a \`string\` but returned the number \`${v}\`; it now formats it with \`toFixed(2)\`.`,
        `函数声明返回 \`string\`，却返回了数字 \`${v}\`；现在用 \`toFixed(2)\` 格式化。`,
      ]);
      return `return ${v}.toFixed(2);`;
    });
  }
  out = out.replace(/range\(1, len\((\w+)\)\)/g, (_, list: string) => {
    notes.push([`The loop started at index 1 and skipped the first element of \`${list}\`; it now starts at 0.`, `循环从下标 1 开始，漏掉了 \`${list}\` 的第一个元素；现在从 0 开始。`]);
    return `range(len(${list}))`;
  });
  out = out.replace(/(\w+) <= (\w+)\.length/g, (_, i: string, list: string) => {
    notes.push([
      `\`${i} <= ${list}.length\` read one element past the end (\`${list}[${list}.length]\` is undefined); the bound is now \`<\`.`,
      `\`${i} <= ${list}.length\` 会越界读取一个元素（\`${list}[${list}.length]\` 为 undefined）；条件改为 \`<\`。`,
    ]);
    return `${i} < ${list}.length`;
  });
  return { code: out, notes };
}

function optimizeCode(code: string, lang: Lang): { code: string; note: [string, string] | undefined } {
  if (lang === 'python') {
    const m = /^([ \t]*)(\w+) = 0\n[ \t]*for (\w+) in range\((?:\d+, )?len\((\w+)\)\):\n[ \t]*\2 \+= (.+)\n[ \t]*return \2/m.exec(code);
    if (m) {
      const [, indent, , i, list, expr] = m;
      const item = 'item';
      const body = (expr ?? '').replace(new RegExp(`${list}\\[${i}\\]`, 'g'), item);
      const replaced = code.replace(m[0], `${indent}return sum(${body} for ${item} in ${list})`);
      return {
        code: replaced,
        note: ['A generator with `sum()` replaces the index loop: no manual accumulator, no indexing.', '用 `sum()` 和生成器表达式替代下标循环：不需要手动累加，也不需要下标。'],
      };
    }
  } else {
    const m = /^([ \t]*)let (\w+) = 0;\n[ \t]*for \(let (\w+) = 0; \3 <=? (\w+)\.length; \3\+\+\) \{\n[ \t]*\2 \+= (.+);\n[ \t]*\}\n[ \t]*return \2;/m.exec(code);
    if (m) {
      const [, indent, , i, list, expr] = m;
      const body = (expr ?? '').replace(new RegExp(`${list}\\[${i}\\]`, 'g'), 'item');
      const replaced = code.replace(m[0], `${indent}return ${list}.reduce((sum, item) => sum + ${body}, 0);`);
      return { code: replaced, note: ['`reduce` replaces the index loop: one pass, no out-of-range index possible.', '用 `reduce` 替代下标循环：一次遍历，也不会越界。'] };
    }
  }
  return { code, note: undefined };
}

function fence(lang: Lang, code: string): string {
  return `\`\`\`${lang === 'python' ? 'python' : 'typescript'}\n${code}\n\`\`\``;
}

function explainAnswer(p: Prompt, code: Code | undefined): string {
  if (!code) return p.zh ? '没有找到选中的代码。' : 'I could not find the selected code.';
  const sig = signature(code.code, code.lang);
  const name = sig ? `\`${sig.name}(${sig.params.join(', ')})\`` : p.zh ? '这段代码' : 'This code';
  const loops = /\bfor\b|\bwhile\b|reduce\(|sum\(/.test(code.code);
  const { notes } = fixCode(code.code);
  if (p.zh) {
    return [
      `**作用**：${name}${sig ? `：${summary(sig.name, true)}` : '。'}`,
      loops ? '**实现**：它遍历输入的每个元素并累加结果，最后返回累加值。' : '**实现**：它直接根据参数计算并返回结果。',
      notes.length > 0 ? `**注意**：${notes.map((n) => n[1]).join(' ')}` : '**注意**：没有发现明显的问题；空输入时请确认返回值符合预期。',
    ].join('\n\n');
  }
  return [
    `**What it does**: ${name}${sig ? ` — ${summary(sig.name, false)}` : '.'}`,
    loops ? '**How**: it walks over every element of its input, accumulates the result and returns it at the end.' : '**How**: it computes the result directly from its arguments.',
    notes.length > 0 ? `**Watch out**: ${notes.map((n) => n[0]).join(' ')}` : '**Watch out**: nothing stands out; check what an empty input should return.',
  ].join('\n\n');
}

interface Case {
  title: string;
  kind: 'happy' | 'edge';
  description: string;
  input?: string;
  expected?: string;
}

function casesFor(name: string, lang: Lang, zh: boolean): Case[] {
  const py = lang === 'python';
  const item = (price: number, qty: number) => (py ? `{"price": ${price}, "qty": ${qty}}` : `{ name: 'x', price: ${price}, qty: ${qty} }`);
  const list = (...items: string[]) => `[${items.join(', ')}]`;
  const num = (n: number) => (py && Number.isInteger(n) ? n.toFixed(1) : String(n));
  if (/total|sum/i.test(name)) {
    const t = (en: string, cn: string) => (zh ? cn : en);
    return [
      {
        title: t('two lines add up', '两行相加'),
        kind: 'happy',
        description: t('price times qty, summed over both lines', '两行的单价乘数量之和'),
        input: list(item(2.5, 2), item(1, 3)),
        expected: num(8),
      },
      { title: t('a single line', '只有一行'), kind: 'happy', description: t('one line is its price times its quantity', '单行等于单价乘数量'), input: list(item(4, 1)), expected: num(4) },
      { title: t('quantities above one', '数量大于一'), kind: 'happy', description: t('quantity multiplies the price', '数量会乘以单价'), input: list(item(3, 5), item(2, 2)), expected: num(19) },
      { title: t('empty cart', '空购物车'), kind: 'edge', description: t('no lines cost nothing', '没有任何行时总价为 0'), input: list(), expected: py ? '0' : '0' },
      { title: t('zero quantity', '数量为零'), kind: 'edge', description: t('a line with qty 0 adds nothing', '数量为 0 的行不计入'), input: list(item(9.99, 0), item(1, 1)), expected: num(1) },
      { title: t('free item', '免费商品'), kind: 'edge', description: t('a price of 0 adds nothing', '单价为 0 的行不计入'), input: list(item(0, 3)), expected: py ? '0' : '0' },
    ];
  }
  const t = (en: string, cn: string) => (zh ? cn : en);
  return [
    { title: t('typical input', '典型输入'), kind: 'happy', description: t(`${name} with ordinary arguments`, `${name} 的普通参数`) },
    { title: t('another typical input', '另一组典型输入'), kind: 'happy', description: t('a second ordinary case', '第二个普通用例') },
    { title: t('result type', '返回值类型'), kind: 'happy', description: t('returns the expected type', '返回预期的类型') },
    { title: t('empty input', '空输入'), kind: 'edge', description: t('empty or zero arguments', '空参数或零值') },
    { title: t('large input', '大输入'), kind: 'edge', description: t('very large values', '非常大的值') },
    { title: t('invalid input', '非法输入'), kind: 'edge', description: t('arguments out of range', '超出范围的参数') },
  ];
}

function testCasesAnswer(p: Prompt, code: Code | undefined): string {
  const sig = code ? signature(code.code, code.lang) : undefined;
  const name = sig?.name ?? /(?:function|method) `(\w+)`/.exec(p.text)?.[1] ?? 'subject';
  const cases = casesFor(name, code?.lang ?? 'ts', p.zh);
  const intro = p.zh ? `以下是 \`${name}\` 的测试用例：` : `Here are test cases for \`${name}\`:`;
  return `${intro}\n\n\`\`\`json\n${JSON.stringify(cases, null, 2)}\n\`\`\``;
}

function slug(title: string, i: number): string {
  const s = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return s || `case_${i + 1}`;
}

function testCodeAnswer(p: Prompt): string {
  const json = firstFence(p.text, /^json$/);
  let cases: Case[] = [];
  try {
    cases = JSON.parse(json?.code ?? '[]') as Case[];
  } catch {
    cases = [];
  }
  const framework = /\b(pytest|unittest|node:test|vitest|jest|mocha)\b/.exec(p.text)?.[1] ?? 'node:test';
  const name = /(?:function|method) `(\w+)`/.exec(p.text)?.[1] ?? 'subject';
  const importPath = /(?:Import the code under test from|从) `([^`]+)`/.exec(p.text)?.[1] ?? './subject';
  const python = framework === 'pytest' || framework === 'unittest';
  if (python) {
    const out = framework === 'pytest' ? ['import pytest', '', `from ${importPath} import ${name}`, ''] : ['import unittest', '', `from ${importPath} import ${name}`, ''];
    if (framework === 'unittest') out.push('', `class Test${name.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}(unittest.TestCase):`);
    cases.forEach((c, i) => {
      const fn = `test_${slug(c.title, i)}`;
      const body =
        c.input !== undefined && c.expected !== undefined
          ? framework === 'pytest'
            ? `assert ${name}(${c.input}) == pytest.approx(${c.expected})`
            : `self.assertAlmostEqual(${name}(${c.input}), ${c.expected})`
          : framework === 'pytest'
            ? `pytest.skip(${JSON.stringify(`needs inputs: ${c.title}`)})`
            : `self.skipTest(${JSON.stringify(`needs inputs: ${c.title}`)})`;
      if (framework === 'pytest') out.push('', `def ${fn}():`, `    """${c.description || c.title}"""`, `    ${body}`, '');
      else out.push(`    def ${fn}(self):`, `        ${body}`, '');
    });
    if (framework === 'unittest') out.push('', "if __name__ == '__main__':", '    unittest.main()');
    return `\`\`\`python\n${out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n\n')
      .trimEnd()}\n\`\`\``;
  }
  const head =
    framework === 'vitest'
      ? [`import { describe, expect, it } from 'vitest';`]
      : framework === 'jest' || framework === 'mocha'
        ? []
        : [`import { describe, it } from 'node:test';`, `import assert from 'node:assert/strict';`];
  const out = [...head, `import { ${name} } from '${importPath}';`, '', `describe('${name}', () => {`];
  cases.forEach((c) => {
    const check =
      c.input !== undefined && c.expected !== undefined
        ? framework === 'node:test'
          ? `assert.equal(${name}(${c.input}), ${c.expected});`
          : `expect(${name}(${c.input})).toBe(${c.expected});`
        : `// TODO: ${c.description || c.title}`;
    out.push(`  it(${JSON.stringify(c.title).replace(/^"|"$/g, "'")}, () => {`, `    ${check}`, '  });', '');
  });
  if (out[out.length - 1] === '') out.pop();
  out.push('});');
  return `\`\`\`typescript\n${out.join('\n')}\n\`\`\``;
}

/** The answer to a selection-command prompt, or undefined when `text` is not one. */
export function taskAnswer(text: string): { task: SelectionTask; text: string } | undefined {
  const p = parseTaskPrompt(text);
  if (!p) return undefined;
  const code = selectionOf(p.text);
  switch (p.task) {
    case 'explain':
    case 'ask':
      return { task: p.task, text: explainAnswer(p, code) };
    case 'docstring':
      return { task: p.task, text: docstringAnswer(p) };
    case 'fix': {
      if (!code) return { task: p.task, text: p.zh ? '没有找到选中的代码。' : 'I could not find the selected code.' };
      const problem = /The editor reports this problem there: "([^\n]*)"\./.exec(p.text)?.[1] ?? '';
      const { code: fixed, notes } = fixCode(code.code, problem);
      const prose = notes.length > 0 ? notes.map((n) => `- ${p.zh ? n[1] : n[0]}`).join('\n') : p.zh ? '没有发现错误，代码保持不变。' : 'I found no bug; the code is unchanged.';
      return { task: p.task, text: `${fence(code.lang, fixed)}\n\n${prose}` };
    }
    case 'optimize': {
      if (!code) return { task: p.task, text: p.zh ? '没有找到选中的代码。' : 'I could not find the selected code.' };
      const { code: better, note } = optimizeCode(fixCode(code.code).code, code.lang);
      const prose = note ? (p.zh ? note[1] : note[0]) : p.zh ? '这段代码已经足够高效。' : 'The code is already efficient.';
      return { task: p.task, text: `${fence(code.lang, better)}\n\n${prose}` };
    }
    case 'testCases':
      return { task: p.task, text: testCasesAnswer(p, code) };
    case 'testCode':
      return { task: p.task, text: testCodeAnswer(p) };
  }
}
