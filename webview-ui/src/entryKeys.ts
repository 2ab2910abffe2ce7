/**
 * The transcript by keyboard. Every entry (message, tool call, permission, notice) is focusable from script
 * (tabindex -1), so the transcript stays one stop for Tab while its controls keep their own:
 *   Up / Down     previous / next entry (earlier or later pages are loaded at the edges)
 *   Home / End    first / last shown entry
 *   Enter, Space  on a tool call (or a thought): shows or hides its details
 *   Escape        back to the composer
 * In a box that scrolls (a tool's output, a diff, a code block: a Tab stop of its own) the arrows, Home and End
 * scroll the box instead.
 * The composer's Ctrl+Up enters it (composer.ts): the permission card waiting for an answer, else the newest entry.
 */

/** Anything focusable inside an entry, in document order (to find the same control again after a re-render). */
const FOCUSABLE = 'a[href], button, summary, textarea, input, [tabindex]:not([tabindex="-1"])';

export interface EntryNav {
  /** The entry elements in the DOM, in order. */
  entries(): HTMLElement[];
  /** Renders the previous / next page into the DOM; false at the very start / end. */
  more(dir: 'earlier' | 'later'): boolean;
  focusComposer(): void;
}

/** Focuses `entry` and brings it into view. */
export function focusEntry(entry: HTMLElement): void {
  entry.focus({ preventScroll: true });
  entry.scrollIntoView({ block: 'nearest' });
}

/** Handles a keydown inside the transcript; true when it was one of ours. */
export function onEntryKey(e: KeyboardEvent, nav: EntryNav): boolean {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return false;
  const target = e.target as HTMLElement;
  if (target.closest('textarea, input, [contenteditable="true"]')) return false;
  if (target.closest('.scrollbox') && /^(Arrow(Up|Down)|Home|End)$/.test(e.key)) return false;
  const entries = nav.entries();
  const current = entries.find((el) => el.contains(target));
  if (!current) return false;
  switch (e.key) {
    case 'ArrowUp':
    case 'ArrowDown': {
      const dir = e.key === 'ArrowUp' ? -1 : 1;
      let list = entries;
      let next = list[list.indexOf(current) + dir];
      if (!next && nav.more(dir < 0 ? 'earlier' : 'later')) {
        list = nav.entries();
        next = list[list.indexOf(current) + dir];
      }
      if (next) focusEntry(next);
      return true;
    }
    case 'Home':
    case 'End': {
      const edge = e.key === 'Home' ? entries[0] : entries.at(-1);
      if (edge) focusEntry(edge);
      return true;
    }
    case 'Enter':
    case ' ': {
      // Only on the entry itself: a button inside it answers Enter on its own.
      if (target !== current) return false;
      const toggle = current.querySelector<HTMLElement>(':scope > .tool-head, :scope > summary');
      toggle?.click();
      return !!toggle;
    }
    case 'Escape':
      nav.focusComposer();
      return true;
  }
  return false;
}

/**
 * Replaces `old` with `fresh` keeping the keyboard focus: on the same control (by position among the
 * focusable ones) when it is still there, else on the entry itself — so a re-render (a permission answered,
 * a tool call finished, details toggled) never drops the focus to the page.
 */
export function replaceKeepingFocus(old: HTMLElement, fresh: HTMLElement): void {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !old.contains(active)) {
    old.replaceWith(fresh);
    return;
  }
  const index = active === old ? -1 : [...old.querySelectorAll(FOCUSABLE)].indexOf(active);
  old.replaceWith(fresh);
  const same = index >= 0 ? fresh.querySelectorAll<HTMLElement>(FOCUSABLE)[index] : undefined;
  (same ?? fresh).focus({ preventScroll: true });
}
