/**
 * ACP's `fs/*` and `terminal/*` requests, served by the host's file and terminal services (session-layer
 * interfaces): ACP shapes in, session shapes to the services, HostRequestError out as the JSON-RPC error ACP
 * clients answer with.
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import { HostRequestError, type FileAccess, type TerminalAccess } from '../session/sessionHost';
import type { AcpClientHandlers } from './acpClient';
import { ErrorCodes } from './acpErrors';

const CODES: Record<HostRequestError['kind'], number> = {
  not_found: ErrorCodes.ResourceNotFound,
  refused: ErrorCodes.InvalidParams,
  invalid: ErrorCodes.InvalidParams,
  rejected: ErrorCodes.InternalError,
};

/** Told of each request the host refused (a path outside the workspace, a protected file, …): what and why. */
export type OnRefused = (method: string, error: HostRequestError) => void;

/** Runs a host call, turning its refusals into the ACP error the agent understands (and telling `onRefused`). */
async function served<T>(call: () => Promise<T>, method: string, onRefused?: OnRefused): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HostRequestError) {
      if (error.kind === 'refused') onRefused?.(method, error);
      throw new ResponseError(CODES[error.kind], error.message, error.data);
    }
    throw error;
  }
}

export function fileHandlers(files: FileAccess, onRefused?: OnRefused): Pick<AcpClientHandlers, 'readTextFile' | 'writeTextFile'> {
  return {
    readTextFile: (p) => served(async () => ({ content: await files.readTextFile({ path: p.path, line: p.line ?? null, limit: p.limit ?? null }) }), 'fs/read_text_file', onRefused),
    writeTextFile: (p) =>
      served(
        async () => {
          await files.writeTextFile({ path: p.path, content: p.content });
          return {};
        },
        'fs/write_text_file',
        onRefused,
      ),
  };
}

export function terminalHandlers(terminals: TerminalAccess, onRefused?: OnRefused): NonNullable<AcpClientHandlers['terminal']> {
  return {
    create: (p) =>
      served(
        async () => {
          const created = await terminals.create({ command: p.command, args: p.args ?? [], env: p.env ?? [], cwd: p.cwd ?? null, outputByteLimit: p.outputByteLimit ?? null });
          // The command runs, but what was dropped from its environment is said in the log and the transcript like a refusal.
          if (created.droppedEnv) onRefused?.('terminal/create', new HostRequestError('refused', created.droppedEnv));
          return { terminalId: created.terminalId };
        },
        'terminal/create',
        onRefused,
      ),
    output: (p) => served(() => terminals.output(p.terminalId), 'terminal/output', onRefused),
    waitForExit: (p) => served(() => terminals.waitForExit(p.terminalId), 'terminal/wait_for_exit', onRefused),
    kill: (p) =>
      served(
        async () => {
          await terminals.kill(p.terminalId);
          return {};
        },
        'terminal/kill',
        onRefused,
      ),
    release: (p) =>
      served(
        async () => {
          await terminals.release(p.terminalId);
          return {};
        },
        'terminal/release',
        onRefused,
      ),
  };
}
