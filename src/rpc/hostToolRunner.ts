/**
 * Serves `host_tool_call` frames from a HostToolProvider: streams `host_tool_update`, answers
 * `host_tool_result` (`isError` on failure), and aborts the call on `host_tool_cancel`.
 */
import type { Logger } from '../core/log';
import type { HostToolProvider, HostToolResult } from '../session/hostTools';

type Writer = (frame: Record<string, unknown>) => Promise<void>;

/** One call being served: abort its work and settle it (answering the agent with `result`, or not at all). */
interface RunningCall {
  abort: AbortController;
  finish(result: HostToolResult | undefined): void;
}

const failed = (text: string): HostToolResult => ({ content: [{ type: 'text', text }], isError: true });

export class HostToolRunner {
  private readonly running = new Map<string, RunningCall>();

  constructor(
    private readonly provider: HostToolProvider | undefined,
    private readonly write: Writer,
    private readonly logger: Logger,
    /** A call not done by then is aborted and answered as failed (ms; 0 = never): the agent never waits forever. */
    private readonly timeoutMs: number,
  ) {}

  get runningCalls(): number {
    return this.running.size;
  }

  /** `{type:"host_tool_call", id, toolCallId, toolName, arguments}` */
  call(frame: Record<string, unknown>): void {
    const id = String(frame.id ?? '');
    const name = String(frame.toolName ?? '');
    const args = (frame.arguments && typeof frame.arguments === 'object' ? frame.arguments : {}) as Record<string, unknown>;
    const answer = (result: HostToolResult) =>
      this.write({ type: 'host_tool_result', id, result: { content: result.content }, ...(result.isError ? { isError: true } : {}) }).catch((error: Error) =>
        this.logger.debug(`Could not answer host tool call ${id}: ${error.message}`),
      );
    if (!this.provider) {
      this.logger.warn(`Host tool call ${id} (${name}) but no host tools are offered`);
      void answer(failed(`No host tool "${name}" is available`));
      return;
    }
    const abort = new AbortController();
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const call: RunningCall = {
      abort,
      finish: (result) => {
        if (this.running.get(id) !== call) return;
        this.running.delete(id);
        clearTimeout(timer);
        const how = result ? (result.isError ? 'failed' : 'done') : 'cancelled; no answer';
        this.logger.debug(`Host tool ${name} (${id}) ${how} after ${Date.now() - started} ms`);
        if (result) void answer(result);
      },
    };
    this.running.set(id, call);
    if (this.timeoutMs > 0) {
      timer = setTimeout(() => {
        this.logger.warn(`Host tool ${name} (${id}) did not finish in ${this.timeoutMs} ms: aborted`);
        abort.abort();
        call.finish(failed(`Host tool "${name}" did not finish within ${this.timeoutMs / 1000} s and was stopped`));
      }, this.timeoutMs);
    }
    this.logger.debug(`Host tool ${name} (${id}, tool call ${String(frame.toolCallId ?? '')}) started`);
    const onUpdate = (partial: HostToolResult) => {
      if (abort.signal.aborted) return;
      this.write({ type: 'host_tool_update', id, partialResult: { content: partial.content } }).catch(() => undefined);
    };
    void Promise.resolve()
      .then(() => this.provider!.call(name, args, abort.signal, onUpdate))
      .then(
        (result) => result,
        (error: unknown): HostToolResult => failed((error as Error)?.message ?? String(error)),
      )
      // A call already settled (cancelled, timed out) drops its late result.
      .then((result) => call.finish(result));
  }

  /** `{type:"host_tool_cancel", id, targetId}`: the agent gave up on the call and expects no answer. */
  cancel(frame: Record<string, unknown>): void {
    const target = String(frame.targetId ?? '');
    const call = this.running.get(target);
    if (!call) return;
    this.logger.debug(`Host tool call ${target} cancelled by the agent`);
    call.abort.abort();
    call.finish(undefined);
  }

  /** The person stopped the turn: every running call is aborted and answered as failed with `reason`. */
  cancelAll(reason: string): void {
    for (const call of [...this.running.values()]) {
      call.abort.abort();
      call.finish(failed(reason));
    }
  }

  /** The agent is going away: every running call is aborted, none answered. */
  abortAll(): void {
    for (const call of [...this.running.values()]) {
      call.abort.abort();
      call.finish(undefined);
    }
  }
}
