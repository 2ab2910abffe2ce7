/**
 * The package string of a registry entry (`distribution.npx.package`, `distribution.uvx.package`) checked
 * before npm or uv sees it: a name with an optional version, range or tag, nothing npm or uv would read as
 * an option (`--foo=bar@1`, `-g`), a URL, a path or a git spec (`x@https://…`, `../x`, `x@github:u/r`).
 */

/** npm's name rules (validate-npm-package-name): an optional `@scope/`, URL-safe characters; a letter or digit first (so never a dash). Uppercase is kept for old packages. */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;
/** A version, a range (`^1`, `>=1.2 <2`, `1.x || 2`) or a dist-tag: no `:`, `/`, `\` or `@`, which make URLs, paths, git specs and `npm:` aliases. */
const NPM_VERSION = /^[0-9a-z^~<>=*|.+ -]+$/i;
/** PEP 508 names: letters, digits, `.`, `_`, `-`, beginning and ending with a letter or digit. */
const PYPI_NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/i;
/** What uv takes after `@`: a version (PEP 440 characters) or `latest`. */
const PYPI_VERSION = /^[0-9a-z][0-9a-z.+!*-]*$/i;

export type PackageRegistry = 'npm' | 'PyPI';

/**
 * `name@version` for npm or uvx, the version pinned to `pinned` when the package names none. Throws an
 * Error saying what is wrong when the package is not a plain name with an optional version.
 */
export function packageSpec(registry: PackageRegistry, pkg: string, pinned: string): { name: string; spec: string } {
  const at = pkg.lastIndexOf('@');
  const name = at > 0 ? pkg.slice(0, at) : pkg;
  const version = at > 0 ? pkg.slice(at + 1) : undefined;
  const [nameRule, versionRule, example] = registry === 'npm' ? [NPM_NAME, NPM_VERSION, 'name@1.2.3, @scope/name@^1'] : [PYPI_NAME, PYPI_VERSION, 'name@1.2.3'];
  const nameOk = nameRule.test(name) && name.length <= 214;
  if (!nameOk || (version !== undefined && !versionRule.test(version))) {
    const what = nameOk ? `its version "${version}" is not a version, range or tag` : `"${name}" is not a valid ${registry} package name`;
    throw new Error(`the ${registry} package "${pkg}" is refused: ${what} (expected ${example}; no options, URLs, paths or git specs)`);
  }
  return { name, spec: `${name}@${version ?? pinned}` };
}
