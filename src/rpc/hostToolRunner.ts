/**
 * Serves `host_tool_call` frames from a HostToolProvider: streams `host_tool_update`, answers
 * `host_tool_result` (`isError` on failure), and aborts the call on `host_tool_cancel`.
 */
import type { Logger } from '../core/log';
import type { HostToolProvider, HostToolResult } from '../session/hostTools';

type Writer = (frame: Record<string, unknown>) => Promise<void>;

export class HostToolRunner {
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly provider: HostToolProvider | undefined,
    private readonly write: Writer,
    private readonly logger: Logger,
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
      this.write({ type: 'host_tool_result', id, result: { content: result.content }, ...(result.isError ? { isError: true } : {}) }).catch(
        (error: Error) => this.logger.debug(`Could not answer host tool call ${id}: ${error.message}`),
      );
    if (!this.provider) {
      this.logger.warn(`Host tool call ${id} (${name}) but no host tools are offered`);
      void answer({ content: [{ type: 'text', text: `No host tool "${name}" is available` }], isError: true });
      return;
    }
    const ctl = new AbortController();
    this.running.set(id, ctl);
    const started = Date.now();
    this.logger.debug(`Host tool ${name} (${id}, tool call ${String(frame.toolCallId ?? '')}) started`);
    const onUpdate = (partial: HostToolResult) => {
      if (ctl.signal.aborted) return;
      this.write({ type: 'host_tool_update', id, partialResult: { content: partial.content } }).catch(() => undefined);
    };
    void Promise.resolve()
      .then(() => this.provider!.call(name, args, ctl.signal, onUpdate))
      .then(
        (result) => result,
        (error: unknown): HostToolResult => ({
          content: [{ type: 'text', text: (error as Error)?.message ?? String(error) }],
          isError: true,
        }),
      )
      .then((result) => {
        this.running.delete(id);
        if (ctl.signal.aborted) {
          this.logger.debug(`Host tool ${name} (${id}) cancelled after ${Date.now() - started} ms; result dropped`);
          return;
        }
        this.logger.debug(`Host tool ${name} (${id}) ${result.isError ? 'failed' : 'done'} in ${Date.now() - started} ms`);
        void answer(result);
      });
  }

  /** `{type:"host_tool_cancel", id, targetId}` */
  cancel(frame: Record<string, unknown>): void {
    const target = String(frame.targetId ?? '');
    const ctl = this.running.get(target);
    if (!ctl) return;
    this.logger.debug(`Host tool call ${target} cancelled by the agent`);
    this.running.delete(target);
    ctl.abort();
  }

  abortAll(): void {
    for (const ctl of this.running.values()) ctl.abort();
    this.running.clear();
  }
}
