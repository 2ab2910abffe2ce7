/**
 * The stdio transport: NDJSON over an agent process's stdout and stdin. The process is the transport's to
 * stop: output closed while it runs, or input it stopped reading, stops it (else what waits on it would wait
 * forever), and its exit is the stream's close reason.
 */
import { AgentProcess, type AgentSpawnSpec } from '../core/agentProcess';
import type { Logger } from '../core/log';
import { NdjsonTransport, type NdjsonTransportOptions } from './ndjsonTransport';
import type { CloseReason, MessageTransport } from './transport';

export class StdioTransport extends NdjsonTransport {
  readonly closed: Promise<CloseReason>;

  constructor(
    readonly process: AgentProcess,
    options: NdjsonTransportOptions = {},
  ) {
    super(process.child.stdout, process.child.stdin, options);
    this.closed = process.exited;
    this.onStall((bytes, ms) => process.inputStalled(bytes, ms));
  }

  static spawn(spec: AgentSpawnSpec, logger: Logger, options: NdjsonTransportOptions = {}): StdioTransport {
    return new StdioTransport(AgentProcess.spawn(spec, logger), options);
  }

  /** Stdin closed, then SIGTERM, then SIGKILL to the whole process group. */
  close(): Promise<CloseReason> {
    return this.process.shutdown();
  }

  /** An agent that closes its output but stays alive can answer nothing more: it is stopped. */
  protected override inputEnded(): void {
    this.process.outputClosed();
  }
}

/** The agent process under a stdio transport (its pid, pipes and stderr, for tests and the compatibility check). */
export function stdioProcess(transport: MessageTransport): StdioTransport['process'] {
  if (transport instanceof StdioTransport) return transport.process;
  throw new Error('This agent is not reached through the stdio of a process of ours');
}
