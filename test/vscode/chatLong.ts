/// <reference lib="dom" />
/**
 * A long transcript in the real chat webview: feeds one from test/vscode/chatLongAgent.ts and measures it
 * inside the page (performance.now, requestAnimationFrame deltas, DOM size, JS heap). Used by the cheap check
 * in chatUi.ts (DOM stays bounded) and by bench/chatScroll.mjs (the figures in bench/RESULTS.md).
 */
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { chatFrame, openChat, send, waitText } from './chatUi';
import { showExplorer } from './waits';

/** The agent settings entry for the long-transcript fixture agent. */
export function longAgentConfig(name = 'long-agent'): { name: string; command: string; args: string[]; env: Record<string, string>; inheritEnv: boolean } {
  return { name, command: process.execPath, args: [path.join(__dirname, 'chatLongAgent.js')], env: {}, inheritEnv: true };
}

export interface DomFigures {
  /** Entities of the transcript (those the page holds and those the extension holds before them). */
  total: number;
  /** Entities the page holds (a snapshot carries the newest; earlier ones come as the reader scrolls up). */
  held: number;
  /** `.entries > .entry` elements in the DOM. */
  domEntries: number;
  /** Every element of the webview's document. */
  domNodes: number;
  /** performance.memory.usedJSHeapSize of the webview, MiB (Chromium rounds it). */
  heapMiB: number | null;
  /** Where the DOM's entries are out of the transcript's order or repeated (the long fixture numbers them), else null. */
  disorder: string | null;
}

export interface FrameStats {
  /** Wall time until the end was reached and stayed. */
  ms: number;
  frames: number;
  p50: number;
  p95: number;
  max: number;
  /** Frames longer than 50 ms. */
  long: number;
}

export async function domFigures(frame: Frame): Promise<DomFigures> {
  return frame.evaluate(() => {
    const mem = (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory;
    return {
      total: Number(document.querySelector<HTMLElement>('.transcript')?.dataset.total ?? -1),
      held: Number(document.querySelector<HTMLElement>('.transcript')?.dataset.held ?? -1),
      domEntries: document.querySelectorAll('.entries > .entry').length,
      domNodes: document.getElementsByTagName('*').length,
      heapMiB: mem ? Math.round((mem.usedJSHeapSize / 1048576) * 10) / 10 : null,
      disorder: (() => {
        const keys = new Set<string>();
        let last = -1;
        for (const el of document.querySelectorAll<HTMLElement>('.entries > .entry')) {
          const key = el.dataset.key ?? '';
          if (keys.has(key)) return `${key} twice`;
          keys.add(key);
          const m = /Question (\d+): how|Message (\d+): |src\/file(\d+)\.ts/.exec(el.textContent ?? '');
          const n = m ? Number(m[1] ?? m[2] ?? m[3]) : last;
          if (n < last) return `${key} (${n}) after ${last}`;
          last = n;
        }
        return null;
      })(),
    };
  });
}

/** Sends `LONG <messages> <tools>` and waits for its last message; returns the wall time, ms. */
export async function feedLong(frame: Frame, messages: number, tools: number, timeoutMs = 240_000): Promise<number> {
  const t0 = Date.now();
  await send(frame, `LONG ${messages} ${tools}`);
  await waitText(frame, '.msg.agent', `LONG-END ${messages} messages`, timeoutMs);
  await frame.waitForFunction(() => document.body.dataset.turn === 'idle', undefined, { timeout: 30_000 });
  return Date.now() - t0;
}

/**
 * Scrolls the transcript to its top (loading earlier pages on the way) or back to its bottom, 1,500 px per
 * animation frame like fast wheel flicks, and records every frame's duration.
 */
export async function scrollThrough(frame: Frame, dir: 'up' | 'down', timeoutMs = 90_000): Promise<FrameStats> {
  return frame.evaluate(
    ([d, limit]) =>
      new Promise<FrameStats>((resolve) => {
        const el = document.querySelector<HTMLElement>('.transcript')!;
        const deltas: number[] = [];
        const t0 = performance.now();
        let last = t0;
        let settled = 0;
        const atEnd = () => (d === 'up' ? el.scrollTop <= 0 && el.dataset.atStart === 'true' : el.scrollHeight - el.scrollTop - el.clientHeight < 2 && el.dataset.atEnd === 'true');
        const step = (now: number) => {
          deltas.push(now - last);
          last = now;
          // A wheel event marks the scroll as the person's (the transcript stops following the end).
          el.dispatchEvent(new WheelEvent('wheel', { deltaY: d === 'up' ? -1500 : 1500 }));
          el.scrollTop += d === 'up' ? -1500 : 1500;
          settled = atEnd() ? settled + 1 : 0;
          if (settled >= 10 || now - t0 > limit) {
            const xs = deltas.slice(1).sort((a, b) => a - b);
            const q = (p: number) => Math.round((xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0) * 10) / 10;
            resolve({ ms: Math.round(now - t0), frames: xs.length, p50: q(0.5), p95: q(0.95), max: Math.round((xs.at(-1) ?? 0) * 10) / 10, long: xs.filter((x) => x > 50).length });
          } else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
    [dir, timeoutMs] as const,
  );
}

/** Hides the view and shows it again; returns ms from the click until the transcript's last entry is rendered. */
export async function reopen(page: Page, lastText: string): Promise<{ ms: number; frame: Frame; mountMs: number }> {
  await showExplorer(page, await chatFrame(page));
  const t0 = Date.now();
  const item = page.locator('.activitybar [aria-label^="Atrium"]').first();
  await item.click();
  const frame = await chatFrame(page, 60_000).catch(() => openChat(page));
  await waitText(frame, '.msg.agent', lastText, 60_000);
  const ms = Date.now() - t0;
  const mountMs = Number(await frame.evaluate(() => document.body.dataset.mountMs ?? -1));
  return { ms, frame, mountMs };
}
