/**
 * One gateway connection's agent: a fresh stdio agent process (its own process group) whose NDJSON messages
 * are bridged to the SDK server's message stream for that connection. The stream's end (the client left,
 * DELETE, a limit, the gateway stopping) stops the process group; the agent's exit ends the stream. It
 * counts what passes each way and notices a connection with no traffic for the idle time.
 */
import type { AgentSpawnSpec } from '../core/agentProcess';
import { DEFAULT_MAX_LINE_BYTES, MAX_WRITE_BACKLOG_BYTES } from '../core/ndjson';
import type { Logger } from '../core/log';
import { StdioTransport } from '../transport/stdio';

/** The SDK's per-connection message stream (`Stream` of @agentclientprotocol/sdk): what the client sends is read, what the agent says is written. */
export interface MessageStream {
  readable: ReadableStream<object>;
  writable: WritableStream<object>;
}

export interface LinkCounts {
  messagesIn: number;
  messagesOut: number;
  bytesIn: number;
  bytesOut: number;
}

export interface AgentLinkOptions {
  logger: Logger;
  /** Largest line the agent may send (longer ones are dropped, as over stdio everywhere). */
  maxMessageBytes: number;
  idleTimeoutMs: number;
  /** No message either way for `idleTimeoutMs`. */
  onIdle: () => void;
}

export class AgentLink {
  readonly started = Date.now();
  /** Settles once the agent process has exited and its process group is gone. */
  readonly ended: Promise<void>;
  private readonly transport: StdioTransport;
  private lastTraffic = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<unknown> | undefined;

  constructor(
    spec: AgentSpawnSpec,
    stream: MessageStream,
    private readonly options: AgentLinkOptions,
  ) {
    const limit = Math.max(DEFAULT_MAX_LINE_BYTES, options.maxMessageBytes);
    this.transport = StdioTransport.spawn(spec, options.logger, { maxLineBytes: limit, maxBacklogBytes: Math.max(MAX_WRITE_BACKLOG_BYTES, 2 * limit) });
    const writer = stream.writable.getWriter();
    const agentOut = this.transport.process.child.stdout;
    this.transport.listen({
      message: (message) => {
        this.touch();
        writer.write(message).catch(() => undefined);
        // The SDK takes the next message once its client has read enough: until then the agent's output waits in its pipe.
        if ((writer.desiredSize ?? 1) <= 0 && !agentOut.isPaused()) {
          agentOut.pause();
          void writer.ready.then(
            () => agentOut.resume(),
            () => undefined,
          );
        }
      },
      malformed: (error) => options.logger.warn(`The agent sent a line that is not a JSON-RPC message; dropped: ${error.message}`),
    });
    void this.pump(stream.readable.getReader());
    this.scheduleIdle();
    this.ended = this.transport.closed.then(async (exit) => {
      clearTimeout(this.idleTimer);
      writer.close().catch(() => undefined);
      // Called after the exit too: it waits until every member of the agent's process group is gone.
      await this.stop();
      return exit.spawnError ? options.logger.error(`The agent could not be started: ${exit.spawnError}`) : undefined;
    });
  }

  get pid(): number | undefined {
    return this.transport.process.pid;
  }

  /** Client messages in, agent messages out (and their bytes as NDJSON). */
  get counts(): LinkCounts {
    const s = this.transport.stats;
    return { messagesIn: s.messagesOut, messagesOut: s.messagesIn, bytesIn: s.bytesOut, bytesOut: s.bytesIn };
  }

  /** How the agent ended, once it has. */
  get exit(): string | undefined {
    const e = this.transport.process.exitStatus;
    return e ? (e.spawnError ?? (e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`)) : undefined;
  }

  /** Stops the agent: stdin closed, SIGTERM to its group, SIGKILL if it lingers (once; later calls wait for the same). */
  stop(): Promise<unknown> {
    this.stopping ??= this.transport.close();
    return this.stopping;
  }

  /** Client messages to the agent, one at a time and in order; the stream's end stops the agent. */
  private async pump(reader: ReadableStreamDefaultReader<object>): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.touch();
        await this.transport.write(value);
      }
    } catch (error) {
      this.options.logger.debug(`Gateway connection to the agent ended: ${(error as Error).message}`);
    } finally {
      reader.releaseLock();
      void this.stop();
    }
  }

  private touch(): void {
    this.lastTraffic = Date.now();
  }

  /** One timer per idle period, not per message: when it fires early (there was traffic), it waits for the rest. */
  private scheduleIdle(): void {
    const due = this.lastTraffic + this.options.idleTimeoutMs - Date.now();
    this.idleTimer = setTimeout(
      () => {
        if (Date.now() - this.lastTraffic >= this.options.idleTimeoutMs) this.options.onIdle();
        else this.scheduleIdle();
      },
      Math.max(0, due),
    );
  }
}
