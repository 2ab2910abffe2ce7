/**
 * Message transports without byte reads of their own (a WebSocket's frames, Streamable HTTP's messages) group
 * what arrives before the event loop turns into one read, as a stdio chunk is: the receiver hears `read` at the
 * first message and `readDone` once the turn is over, so adjacent chunks merge as they do over stdio.
 */
import type { StreamReceiver } from '../core/ndjson';

export class ReadTurns {
  private reading = false;

  /** Before a message is delivered to `receiver`; `current` is the listener when the turn ends. */
  begin(receiver: StreamReceiver, current: () => StreamReceiver | undefined): void {
    if (this.reading) return;
    this.reading = true;
    receiver.read?.();
    setImmediate(() => {
      this.reading = false;
      current()?.readDone?.();
    });
  }
}
