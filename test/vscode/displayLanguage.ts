/**
 * A VS Code user data folder whose display language is Chinese (zh-cn), for withWorkbench's `userDataDir`.
 * No language pack is downloaded: code-server takes the language from User/argv.json's `locale` and, for
 * it, the pack that <user-data>/languagepacks.json names. That pack translates nothing, so VS Code's own
 * words stay English (the tests' selectors keep working) while `vscode.env.language` is zh-cn: the
 * extension's l10n bundle and package.nls.zh-cn.json are what change.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Creates `dir` as a user data folder in `locale` (default zh-cn) and returns it. */
export function userDataIn(dir: string, locale = 'zh-cn'): string {
  fs.mkdirSync(path.join(dir, 'User'), { recursive: true });
  const translations = path.join(dir, `empty-pack.${locale}.i18n.json`);
  fs.writeFileSync(translations, JSON.stringify({ contents: {} }));
  // VS Code lists a pack by its first extension's id (getInstalledLanguages): one that is never installed.
  const pack = {
    hash: `test-${locale}`,
    extensions: [{ extensionIdentifier: { id: `atrium-test.language-pack-${locale}` }, version: '0.0.0' }],
    translations: { vscode: translations },
    label: locale,
  };
  fs.writeFileSync(path.join(dir, 'languagepacks.json'), JSON.stringify({ [locale]: pack }));
  fs.writeFileSync(path.join(dir, 'User', 'argv.json'), JSON.stringify({ locale }));
  return dir;
}
