/// <reference lib="dom" />
/**
 * axe-core (@axe-core/playwright) over the chat webview's own document in the real workbench, in the light,
 * dark and high-contrast themes. The analysis is scoped to the webview through its frame chain (the
 * workbench's host iframe of our extension, then the webview's inner frame): VS Code's own workbench is not
 * judged here. Themes are switched through the user settings file the runner wrote, which VS Code watches —
 * no palette, so the keyboard focus stays where the test put it. What axe cannot decide about colours —
 * the text of the vscode-elements buttons, drawn in a shadow root — is measured here (buttonContrast).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Frame, Page } from 'playwright-core';
import { until } from '../support/wait';
import type { WorkbenchInfo } from './runner';

export const THEMES = {
  light: { setting: 'Default Light Modern', bodyClass: 'vscode-light' },
  dark: { setting: 'Default Dark Modern', bodyClass: 'vscode-dark' },
  hc: { setting: 'Default High Contrast', bodyClass: 'vscode-high-contrast' },
} as const;
export type ThemeName = keyof typeof THEMES;

/** The chat webview's document as seen from the workbench: host iframe (ours, by extension id), inner frame, body. */
const CHAT_DOCUMENT = ['iframe.webview[src*="extensionId=agent-host.agent-host"]', 'iframe#active-frame', 'html'];

/** WCAG 2.0–2.2 A/AA and axe's best practices. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

/** What fails the test: axe's two highest impacts. */
const BLOCKING = new Set(['serious', 'critical']);

export interface Finding {
  state: string;
  theme: ThemeName;
  rule: string;
  impact: string;
  help: string;
  targets: string[];
  summary: string;
}

/**
 * One line per rule and set of elements, with every state / theme it showed in (the same violation tends to
 * show in all three themes and in every state): rule, impact, where, what axe says, the elements (selectors
 * inside the webview), the first element's failure summary.
 */
export function summarize(findings: Finding[]): string[] {
  const groups = new Map<string, { f: Finding; where: string[] }>();
  for (const f of findings) {
    const key = `${f.rule} ${f.targets.join(' ')}`;
    const g = groups.get(key) ?? { f, where: [] };
    g.where.push(`${f.state}/${f.theme}`);
    groups.set(key, g);
  }
  return [...groups.values()].map(({ f, where }) => {
    const more = f.targets.length > 4 ? ` (+${f.targets.length - 4} more)` : '';
    return `${f.rule} (${f.impact}) in ${where.join(', ')}: ${f.help} — ${f.targets.slice(0, 4).join(' | ')}${more} — ${f.summary}`;
  });
}

/**
 * Sets `workbench.colorTheme` in the run's user settings (the file runner.ts writes under its scratch) and
 * waits until the workbench and the chat webview both show that theme.
 */
export async function useTheme(page: Page, frame: Frame, info: WorkbenchInfo, theme: ThemeName): Promise<void> {
  const { setting, bodyClass } = THEMES[theme];
  // runner.ts writes the same settings as user (User/) and remote machine (Machine/) settings: both say the theme.
  for (const scope of ['User', 'Machine']) {
    const file = path.join(info.scratch, 'user-data', scope, 'settings.json');
    const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    if (settings['workbench.colorTheme'] === setting) continue;
    settings['workbench.colorTheme'] = setting;
    fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
  }
  const workbenchClass = { light: 'vs', dark: 'vs-dark', hc: 'hc-black' }[theme];
  await until(
    async () =>
      (await page.evaluate((c) => document.querySelector('.monaco-workbench')?.classList.contains(c) === true, workbenchClass)) &&
      (await frame.evaluate((c) => document.body.classList.contains(c), bodyClass)),
    { what: `the workbench and the chat webview in ${setting} (body class ${bodyClass})`, timeoutMs: 20_000, intervalMs: 150 },
  );
}

export class AxeReport {
  readonly findings: Finding[] = [];
  readonly screenshots: string[] = [];
  /** Milliseconds spent in axe and in theme switches, for the log. */
  ms = 0;
  constructor(
    private readonly page: Page,
    private readonly info: WorkbenchInfo,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Analyzes the chat webview as it is now in the light, dark and high-contrast themes (then back to light),
   * keeps every violation, and saves a screenshot of the side bar per theme: test-artifacts/a11y-<state>-<theme>.png.
   */
  async scan(frame: Frame, state: string): Promise<void> {
    const t0 = Date.now();
    for (const theme of ['light', 'dark', 'hc'] as const) {
      await useTheme(this.page, frame, this.info, theme);
      const results = await new AxeBuilder({ page: this.page })
        // No CSSOM preload: its inline styles break the webview's CSP (a console error per scan), and
        // only css-orientation-lock would use it.
        .options({ preload: false })
        .include({ fromFrames: CHAT_DOCUMENT } as unknown as string)
        .withTags(TAGS)
        .analyze();
      const found = results.violations.map((v) => ({
        state,
        theme,
        rule: v.id,
        impact: v.impact ?? 'unknown',
        help: v.help,
        targets: v.nodes.map((n) => JSON.stringify(n.target.slice(2))),
        summary: (v.nodes[0]?.failureSummary ?? '').split('\n').slice(0, 3).join(' ').replace(/\s+/g, ' ').trim(),
      }));
      found.push(...(await buttonContrast(frame)).map((b) => ({ state, theme, ...b })));
      this.findings.push(...found);
      const blocking = found.filter((f) => BLOCKING.has(f.impact));
      const review = results.incomplete.map((i) => `${i.id} ×${i.nodes.length}`).join(', ');
      this.log(
        `axe ${state} / ${theme}: ${results.passes.length} rules pass, ${blocking.length} serious/critical, ${found.length - blocking.length} lesser${found.length ? ` (${found.map((f) => f.rule).join(', ')})` : ''}${review ? `; axe could not decide: ${review}` : ''}`,
      );
      const file = path.join(this.info.screenshotDir, `a11y-${state}-${theme}.png`);
      fs.mkdirSync(this.info.screenshotDir, { recursive: true });
      await this.page.locator('.part.sidebar').screenshot({ path: file, timeout: 15_000 });
      this.screenshots.push(file);
    }
    await useTheme(this.page, frame, this.info, 'light');
    this.ms += Date.now() - t0;
  }

  /** The serious and critical findings. */
  blocking(): Finding[] {
    return this.findings.filter((f) => BLOCKING.has(f.impact));
  }
}

/**
 * Text contrast of the vscode-elements buttons (permission options, Send, Stop…), which axe leaves undecided:
 * their face is in a shadow root under a pseudo-element. Measured on the face's computed colours (a
 * translucent background over the page's): below 4.5:1 is reported as a serious `button-contrast` finding.
 */
async function buttonContrast(frame: Frame): Promise<Omit<Finding, 'state' | 'theme'>[]> {
  const low = await frame.evaluate(() => {
    const rgba = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number).concat(1).slice(0, 4) as [number, number, number, number];
    const over = (top: number[], under: number[]) => top.slice(0, 3).map((v, i) => v * top[3]! + under[i]! * (1 - top[3]!));
    const lum = (c: number[]) => {
      const [r, g, b] = c.map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const page = rgba(getComputedStyle(document.body).backgroundColor);
    const out: { target: string; text: string; ratio: number }[] = [];
    for (const button of document.querySelectorAll<HTMLElement>('vscode-button')) {
      const face = button.shadowRoot?.querySelector<HTMLElement>('.base');
      if (!face || !button.checkVisibility() || !(button.textContent ?? '').trim()) continue;
      const style = getComputedStyle(face);
      const bg = over(rgba(style.backgroundColor), page);
      const fg = over(rgba(style.color), bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a! + 0.05) / (b! + 0.05);
      if (ratio < 4.5)
        out.push({
          target: button.getAttribute('data-testid') ?? button.getAttribute('data-option') ?? button.className,
          text: (button.textContent ?? '').trim(),
          ratio: Math.round(ratio * 100) / 100,
        });
    }
    return out;
  });
  return low.map((b) => ({
    rule: 'button-contrast',
    impact: 'serious',
    help: 'vscode-button text must have a contrast of at least 4.5:1',
    targets: [`vscode-button ${b.target} "${b.text}"`],
    summary: `contrast ${b.ratio}:1`,
  }));
}
