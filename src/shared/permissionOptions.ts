/**
 * A permission option's button label, the same in the modal dialog (src/views) and the chat's inline card
 * (webview-ui): what its kind does ("Always allow"), the agent's own wording beside it when the words differ
 * ("Allow always" says the same), and ⚠ when that wording contradicts the kind — the kind is what is recorded.
 */
export function permissionOptionLabel(
  option: { name: string; contradicts?: boolean },
  /** The kind's label in the display language; undefined for a kind without one (the agent's name is used). */
  kindLabel: string | undefined,
  /** Other wordings of the kind that count as the same (the English label under another display language). */
  sameAs: readonly string[] = [],
): string {
  if (!kindLabel) return option.name;
  const own = option.name.trim();
  const words = (t: string) => t.toLowerCase().split(/\W+/).filter(Boolean).sort().join(' ');
  const same = [kindLabel, ...sameAs].some((l) => words(l) === words(own));
  return `${option.contradicts ? '⚠ ' : ''}${kindLabel}${own && !same ? ` — “${own}”` : ''}`;
}
