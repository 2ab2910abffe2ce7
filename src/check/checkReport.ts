/**
 * The compatibility report as text (a table for a terminal), JSON (the report as is) and Markdown (a table
 * plus the frames per check), and the cross-agent table of docs/agent-compatibility.md. Pure functions.
 */
import * as os from 'node:os';
import { CHECK_IDS, type CheckStatus, type CompatReport } from './checkTypes';

export const STATUS_MARK: Record<CheckStatus, string> = { verified: '✅', claimed: '☑️', absent: '—', failed: '❌' };

export const LEGEND =
  '✅ verified (seen on a real turn or frame) · ☑️ claimed (advertised, not exercised) · — absent (not advertised or ' + 'not available) · ❌ failed (advertised or expected, and it did not work)';

function agentLabel(r: CompatReport): string {
  return `${r.agent.title ?? r.agent.name}${r.agent.version ? ` ${r.agent.version}` : ''}`;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderJson(r: CompatReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}

export function renderText(r: CompatReport): string {
  const width = Math.max(...r.checks.map((c) => c.id.length));
  const lines = [
    `${agentLabel(r)} — ${r.protocol.toUpperCase()}${r.protocolVersion !== null ? ` protocol ${r.protocolVersion}` : ''}`,
    '',
    ...r.checks.map((c) => `${c.id.padEnd(width)}  ${c.status.padEnd(8)}  ${c.evidence.text}`),
    '',
    `verified ${count(r, 'verified')}, claimed ${count(r, 'claimed')}, absent ${count(r, 'absent')}, failed ${count(r, 'failed')}`,
  ];
  return `${lines.join('\n')}\n`;
}

function count(r: CompatReport, s: CheckStatus): number {
  return r.checks.filter((c) => c.status === s).length;
}

export function renderMarkdown(r: CompatReport): string {
  const out = [
    `# Compatibility: ${agentLabel(r)}`,
    '',
    `Protocol: ${r.protocol.toUpperCase()}${r.protocolVersion !== null ? ` version ${r.protocolVersion}` : ''}. ${LEGEND}.`,
    '',
    '| Check | Status | Evidence |',
    '| --- | --- | --- |',
    ...r.checks.map((c) => `| \`${c.id}\` | ${STATUS_MARK[c.status]} ${c.status} | ${cell(c.evidence.text)} |`),
    '',
    '## Details',
  ];
  for (const c of r.checks) {
    out.push('', `### \`${c.id}\` — ${c.status}`, '', c.evidence.text);
    if (c.evidence.frames.length) out.push('', '```text', ...c.evidence.frames, '```');
  }
  return `${out.join('\n')}\n`;
}

export function render(r: CompatReport, format: 'text' | 'json' | 'markdown'): string {
  return format === 'json' ? renderJson(r) : format === 'markdown' ? renderMarkdown(r) : renderText(r);
}

/** Run-specific details a committed doc must not carry: ids, durations, temp paths. */
export function stableText(text: string): string {
  return text
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>')
    .replace(/\bses_[A-Za-z0-9]+/g, '<id>')
    .replace(/\b\d+(\.\d+)? ?ms\b/g, '<ms>')
    .replace(TEMP_PATH, '<tmp>');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A path under /tmp or under this machine's temp folder (TMPDIR), up to a space, quote, bracket or comma. */
const TEMP_PATH = new RegExp(`(?:/tmp|${escapeRegExp(os.tmpdir())})[/\\\\][^\\s"'),]+`, 'g');

export interface DocColumn {
  /** Column heading (the agent's id). */
  id: string;
  /** Name and pinned version, for the versions line. */
  label: string;
  report: CompatReport;
}

/** docs/agent-compatibility.md: rows = checks, columns = agents, then notes for every cell not verified. */
export function renderCompatDoc(columns: DocColumn[], intro: string): string {
  const out = [
    '# Agent compatibility',
    '',
    intro,
    '',
    `Legend: ${LEGEND}.`,
    '',
    `Agents: ${columns.map((c) => `**${c.id}** — ${c.label} (${c.report.protocol.toUpperCase()})`).join('; ')}.`,
    '',
    `| Check | ${columns.map((c) => c.id).join(' | ')} |`,
    `| --- | ${columns.map(() => ':---:').join(' | ')} |`,
  ];
  for (const id of CHECK_IDS) {
    const cells = columns.map((c) => {
      const check = c.report.checks.find((k) => k.id === id);
      return check ? STATUS_MARK[check.status] : '?';
    });
    out.push(`| \`${id}\` | ${cells.join(' | ')} |`);
  }
  out.push('', '## Notes (evidence for every cell that is not ✅)');
  for (const c of columns) {
    const notes = c.report.checks.filter((k) => k.status !== 'verified');
    if (!notes.length) continue;
    out.push('', `### ${c.id}`, '');
    for (const k of notes) out.push(`- \`${k.id}\` ${STATUS_MARK[k.status]} ${stableText(k.evidence.text)}`);
  }
  return `${out.join('\n')}\n`;
}
