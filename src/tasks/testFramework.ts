/**
 * Where and how the project tests its code: the framework, a reference test file to imitate, and the path
 * of the new tests. Works on workspace-relative POSIX paths and a file reader, so it runs without vscode.
 */
import * as path from 'node:path/posix';

export type Framework = 'pytest' | 'unittest' | 'node:test' | 'vitest' | 'jest' | 'mocha';

export interface TestPlan {
  framework: Framework | undefined;
  /** True when the framework follows from evidence (config, dependencies, a reference file); else ask. */
  confident: boolean;
  reference?: string;
  /** Workspace-relative path of the test file to write. */
  testPath: string;
  /** How the test file imports the code under test (module path relative to the test file). */
  importPath: string;
}

export interface ProjectView {
  languageId: string;
  /** Workspace-relative path of the file under test. */
  source: string;
  /** Workspace-relative paths of the project's files (tests and config files at least). */
  files: string[];
  read(rel: string): string | undefined;
}

const PY_TEST = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;
const JS_TEST = /\.(test|spec)\.[cm]?[jt]sx?$/;

export function frameworksFor(languageId: string): Framework[] {
  return languageId === 'python' ? ['pytest', 'unittest'] : ['node:test', 'vitest', 'jest', 'mocha'];
}

function isPython(languageId: string): boolean {
  return languageId === 'python';
}

/** Test files ordered by closeness to `source` (shared leading folders), then by name. */
function byCloseness(tests: string[], source: string): string[] {
  const dirs = path.dirname(source).split('/');
  const shared = (f: string) => {
    const parts = path.dirname(f).split('/');
    let n = 0;
    while (n < parts.length && n < dirs.length && parts[n] === dirs[n]) n++;
    return n;
  };
  return [...tests].sort((a, b) => shared(b) - shared(a) || a.localeCompare(b));
}

function pythonFramework(view: ProjectView, reference: string | undefined): Framework | undefined {
  const ref = reference ? (view.read(reference) ?? '') : '';
  if (/unittest\.TestCase|^\s*import unittest|from unittest import TestCase/m.test(ref) && !/^\s*import pytest/m.test(ref)) return 'unittest';
  if (/^\s*import pytest|^\s*from pytest|^def test_\w+\(/m.test(ref)) return 'pytest';
  if (view.files.some((f) => /(^|\/)(conftest\.py|pytest\.ini)$/.test(f))) return 'pytest';
  for (const cfg of ['pyproject.toml', 'setup.cfg', 'tox.ini']) {
    if (/\[tool\.pytest|\[tool:pytest\]|\[pytest\]|pytest/.test(view.read(cfg) ?? '')) return 'pytest';
  }
  return undefined;
}

function jsFramework(view: ProjectView, reference: string | undefined): Framework | undefined {
  const ref = reference ? (view.read(reference) ?? '') : '';
  if (/from ['"]node:test['"]|require\(['"]node:test['"]\)/.test(ref)) return 'node:test';
  if (/from ['"]vitest['"]/.test(ref)) return 'vitest';
  if (/from ['"]@jest\/globals['"]|\bjest\./.test(ref)) return 'jest';
  let pkg: Record<string, unknown> = {};
  try {
    pkg = JSON.parse(view.read('package.json') ?? '{}') as Record<string, unknown>;
  } catch {
    // unreadable package.json: no evidence
  }
  const deps = { ...(pkg.devDependencies as object | undefined), ...(pkg.dependencies as object | undefined) };
  const script = String((pkg.scripts as Record<string, unknown> | undefined)?.test ?? '');
  if ('vitest' in deps || /\bvitest\b/.test(script)) return 'vitest';
  if ('jest' in deps || /\bjest\b/.test(script)) return 'jest';
  if ('mocha' in deps || /\bmocha\b/.test(script)) return 'mocha';
  if (/\bnode\b.*--test\b/.test(script)) return 'node:test';
  return undefined;
}

/** Relative import specifier from the test file to the source (no extension for JS/TS, dotted for Python). */
function importFor(languageId: string, testPath: string, source: string): string {
  if (isPython(languageId)) return source.replace(/\.py$/, '').split('/').join('.');
  let rel = path.relative(path.dirname(testPath), source).replace(/\.[cm]?[jt]sx?$/, '');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  return rel;
}

export function planTests(view: ProjectView, framework?: Framework): TestPlan {
  const python = isPython(view.languageId);
  const tests = view.files.filter((f) => (python ? PY_TEST : JS_TEST).test(f) && f !== view.source);
  const reference = byCloseness(tests, view.source)[0];
  const detected = python ? pythonFramework(view, reference) : jsFramework(view, reference);
  const base = path.basename(view.source).replace(/\.[^.]+$/, '');
  const ext = path.extname(view.source);
  let testPath: string;
  if (python) {
    const dir = reference ? path.dirname(reference) : view.files.some((f) => f.startsWith('tests/')) ? 'tests' : path.dirname(view.source);
    testPath = path.join(dir, `test_${base}.py`);
  } else {
    const suffix = reference && /\.spec\./.test(reference) ? 'spec' : 'test';
    // Tests next to their sources when the reference sits next to a source; else in the reference's folder.
    const refDir = reference ? path.dirname(reference) : undefined;
    const besideSources = !refDir || view.files.some((f) => path.dirname(f) === refDir && !JS_TEST.test(f) && /\.[cm]?[jt]sx?$/.test(f));
    const dir = besideSources ? path.dirname(view.source) : refDir;
    testPath = path.join(dir, `${base}.${suffix}${ext}`);
  }
  const chosen = framework ?? detected;
  return {
    framework: chosen,
    confident: framework !== undefined || detected !== undefined,
    ...(reference ? { reference } : {}),
    testPath: testPath.replace(/^\.\//, ''),
    importPath: importFor(view.languageId, testPath, view.source),
  };
}
