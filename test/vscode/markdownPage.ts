/** The chat page's markdown modules alone in headless Chromium (no VS Code): see markdownStream/markdownParts tests. */
import { build } from 'esbuild';
import { chromium, type Page } from 'playwright-core';
import { repoRoot } from '../support/paths';
import { CHROMIUM } from './runner';

/** Runs `fn` on a headless Chromium page holding `html` and the page's markdown module as `window.MD`. */
export async function withMarkdownPage<T>(html: string, fn: (page: Page) => Promise<T>): Promise<T> {
  const bundle = await build({
    stdin: {
      contents:
        "export { renderMarkdown } from './webview-ui/src/markdown'; export { renderStreamed, blockBoundary } from './webview-ui/src/streamed'; export { highlightAll } from './webview-ui/src/highlight';",
      resolveDir: repoRoot,
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    globalName: 'MD',
    write: false,
    logLevel: 'silent',
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-features=FontDataServiceLinux'] });
  try {
    const page = await browser.newPage();
    await page.setContent(html);
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    return await fn(page);
  } finally {
    await browser.close();
  }
}
