/**
 * A tool card's terminal: the command, its output with ANSI colours (parsed by anser into spans of the terminal
 * theme's colours: no HTML string is built), the exit code or signal, and "Show in Terminal" while the agent holds
 * it. A carriage return not followed by a newline starts its line again (progress bars show their last state).
 */
import Anser from 'anser';
import type { ChatStrings, TerminalCardContent } from '../../src/shared/chatProtocol';
import { fmt, h, icon } from './dom';

export function terminalBlock(t: TerminalCardContent, s: ChatStrings): HTMLElement {
  const status = t.exit ? (t.exit.signal ? fmt(s.terminalSignal, t.exit.signal) : fmt(s.terminalExit, t.exit.exitCode ?? '?')) : t.released || t.ended ? '' : s.terminalRunning;
  const state = t.exit ? (t.exit.exitCode === 0 && !t.exit.signal ? 'ok' : 'failed') : t.released || t.ended ? 'ended' : 'running';
  const show = t.released
    ? null
    : h('button', { type: 'button', className: 'icon-btn', 'data-action': 'show-terminal', 'data-terminal': t.terminalId, title: s.showTerminal, 'aria-label': s.showTerminal }, icon('link-external'));
  const out = h('pre', { className: 'term-out', tabindex: '0', 'aria-label': t.commandLine ?? s.terminal });
  if (t.dropped) out.append(h('div', { className: 'term-dropped' }, fmt(s.terminalDropped, t.dropped)));
  out.append(...ansiSpans(overwrittenLines(t.output)));
  // New output shows at the bottom (once the card is in the page).
  requestAnimationFrame(() => {
    out.scrollTop = out.scrollHeight;
  });
  return h(
    'div',
    { className: `terminal-block term-${state}`, 'data-terminal': t.terminalId },
    h('div', { className: 'term-head' }, icon('terminal'), h('code', { className: 'term-cmd' }, t.commandLine ?? t.terminalId), h('span', { className: 'term-status' }, status), show),
    out,
  );
}

/** Each line as a terminal leaves it: what follows its last lone carriage return. */
function overwrittenLines(text: string): string {
  if (!text.includes('\r')) return text;
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1))
    .join('\n');
}

function ansiSpans(text: string): Node[] {
  if (!text.includes('\x1b')) return [document.createTextNode(text)];
  return Anser.ansiToJson(text, { use_classes: true, remove_empty: true }).map((e) => {
    if (!e.fg && !e.bg && !e.decorations.length) return document.createTextNode(e.content);
    const span = h('span', { className: [...e.decorations.map((d) => `ansi-${d}`), ...colourClasses(e)].join(' ') }, e.content);
    // 256 and true colours are not theme colours: set through the style object (the page's CSP refuses style attributes).
    const fg = e.fg === 'ansi-truecolor' ? e.fg_truecolor : palette(e.fg);
    const bg = e.bg === 'ansi-truecolor' ? e.bg_truecolor : palette(e.bg);
    if (fg) span.style.color = `rgb(${fg})`;
    if (bg) span.style.backgroundColor = `rgb(${bg})`;
    return span;
  });
}

function colourClasses(e: Anser.AnserJsonEntry): string[] {
  const base = (c: string | null) => (c && !c.startsWith('ansi-palette-') && c !== 'ansi-truecolor' ? c : undefined);
  return [base(e.fg) && `${e.fg}-fg`, base(e.bg) && `${e.bg}-bg`].filter((c): c is string => !!c);
}

/** The xterm colour `ansi-palette-N` (16-255) as "r, g, b". */
function palette(c: string | null): string | undefined {
  const n = c?.startsWith('ansi-palette-') ? Number(c.slice(13)) : Number.NaN;
  if (!(n >= 16 && n <= 255)) return undefined;
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `${v}, ${v}, ${v}`;
  }
  const level = (i: number) => (i ? 55 + i * 40 : 0);
  const i = n - 16;
  return `${level(Math.floor(i / 36))}, ${level(Math.floor(i / 6) % 6)}, ${level(i % 6)}`;
}
