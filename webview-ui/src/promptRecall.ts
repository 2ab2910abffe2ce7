/**
 * The composer's ↑/↓ recall of what was sent, newest last (as in a shell and VS Code's own chat): ↑ on the first
 * line of an empty input (or of a recalled prompt) shows the one before, ↓ on the last line the one after, and past
 * the newest the draft that was there before. Typing ends the recall. At most MAX prompts, kept with the page state.
 */
const MAX = 50;

export class PromptRecall {
  private at = -1;
  private draft = '';

  constructor(
    readonly list: string[],
    private readonly save: () => void,
  ) {}

  get recalling(): boolean {
    return this.at >= 0;
  }

  add(text: string): void {
    this.at = -1;
    if (!text.trim() || this.list.at(-1) === text) return;
    this.list.push(text);
    if (this.list.length > MAX) this.list.splice(0, this.list.length - MAX);
    this.save();
  }

  /** The prompt before the one shown (`current`: what the input holds), or undefined at the oldest. */
  older(current: string): string | undefined {
    if (this.at < 0) {
      if (!this.list.length) return undefined;
      this.draft = current;
      this.at = this.list.length;
    }
    if (this.at === 0) return undefined;
    return this.list[--this.at];
  }

  /** The prompt after the one shown; past the newest, the draft from before the recall. */
  newer(): string | undefined {
    if (this.at < 0) return undefined;
    if (++this.at < this.list.length) return this.list[this.at];
    this.at = -1;
    return this.draft;
  }

  /** ↑ / ↓ in `input` at its first / last line: shows the prompt before / after; false when it shows none. */
  key(input: HTMLTextAreaElement, up: boolean): boolean {
    const { value, selectionStart: caret } = input;
    const edge = up ? !value.slice(0, caret).includes('\n') : !value.slice(caret).includes('\n');
    if (!edge || (up ? value !== '' && !this.recalling : !this.recalling)) return false;
    const text = up ? this.older(value) : this.newer();
    if (text === undefined) return false;
    input.value = text;
    input.setSelectionRange(text.length, text.length);
    return true;
  }

  stop(): void {
    this.at = -1;
  }
}
