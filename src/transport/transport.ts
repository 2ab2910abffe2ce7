/**
 * A message stream to an agent, under both protocol adapters (ACP's JSON-RPC, pi's RPC mode): JSON objects
 * in and out, the lines it could not read, writes that wait for the peer, and one close with its reason.
 * The adapters know only this; what carries the bytes (a child's stdio, a socket, a sandbox) is the
 * transport's, and so is how it stops.
 */
import type { ExitInfo } from '../core/agentProcess';
import type { Disposable, StreamReceiver } from '../core/ndjson';

export type { StreamReceiver } from '../core/ndjson';

/** Why the stream closed: the agent's exit (its code or signal, what it did wrong, its stderr's tail). */
export type CloseReason = ExitInfo;

/** What went through the stream (the traffic view's counters). */
export interface TransportStats {
  bytesIn: number;
  bytesOut: number;
  messagesIn: number;
  messagesOut: number;
  /** Lines dropped: malformed, not a JSON object, or over the line limit. */
  linesDropped: number;
}

export interface MessageTransport {
  /** Starts delivering what the peer sends, in order, to `receiver` (once per transport). */
  listen(receiver: StreamReceiver): Disposable;
  /**
   * Sends one message as one frame, behind the ones before it. What waits for a peer that reads nothing is
   * bounded (past it the write is refused at once), and a write it has not taken for the stall time is
   * reported (`onStall`); a stdio transport then stops its agent, which closes the stream.
   */
  write(message: object): Promise<void>;
  /** False once it takes no more writes (closed, broken, or closing): `closed` will then say why. */
  readonly writable: boolean;
  /** Settles once, when the stream is gone for good, with why. */
  readonly closed: Promise<CloseReason>;
  /** Graceful close; settles with the reason, as `closed` does. */
  close(): Promise<CloseReason>;
  /** The peer read nothing of what waits for it (`waitingBytes`) for `ms`. */
  onStall(listener: (waitingBytes: number, ms: number) => void): () => void;
  readonly stats: Readonly<TransportStats>;
}
