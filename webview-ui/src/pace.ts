/**
 * A message streamed faster than frames can render it catches up in steps: at most `budget` new characters
 * per frame, the budget halved while a frame that renders streamed text takes more than FRAME_WORK_MS (its
 * rendering and layout), doubled while it takes under half and text waits (between MIN_BUDGET and
 * MAX_BUDGET): frames stay short, and text keeps coming.
 */
const FRAME_WORK_MS = 10;
const MIN_BUDGET = 4096;
const MAX_BUDGET = 1 << 20;
/**
 * Text comes in batches (src/views/chat/chatBatch.ts FLUSH_MS: 40 ms, between two and three frames): a large one
 * is shown over the frames until the next, a third of what is not shown yet per frame, not all in its first
 * (one frame of 64 KB of new text would take 20-30 ms). A batch under SMOOTH_MIN characters is shown at once.
 */
const SPREAD = 3;
const SMOOTH_MIN = 8192;

/** The transcript's pace of streamed text, frame by frame. */
export class StreamPace {
  /** New characters a streaming message renders per frame (see FRAME_WORK_MS). */
  private budget = 64 * 1024;
  /** A message rendered only part of what it has this frame. */
  private behind = false;
  /** Text streamed onto a message was rendered this frame. */
  private streamed = false;

  /**
   * How much of a message of `length` characters to show this frame, `shown` being shown (-1: not rendered yet);
   * `appended`: only appended to since (else it renders whole). Less than `length` means: render it again next frame.
   */
  upTo(length: number, shown: number, appended: boolean): number {
    const step = Math.min(this.budget, Math.max(SMOOTH_MIN, Math.ceil((length - shown) / SPREAD)));
    const upTo = appended && shown >= 0 ? Math.min(length, shown + step) : length;
    if (appended && upTo > shown) this.streamed = true;
    if (upTo < length) this.behind = true;
    return upTo;
  }

  /** The frame's rendering took `ms`: the budget follows what a frame that streamed text took. */
  frameDone(ms: number): void {
    if (this.streamed) this.budget = ms > FRAME_WORK_MS ? Math.max(MIN_BUDGET, this.budget / 2) : ms < FRAME_WORK_MS / 2 && this.behind ? Math.min(MAX_BUDGET, this.budget * 2) : this.budget;
    this.behind = false;
    this.streamed = false;
  }
}
