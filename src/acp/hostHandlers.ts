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

/** Runs a host call, turning its refusals into the ACP error the agent understands. */
async function served<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HostRequestError) throw new ResponseError(CODES[error.kind], error.message, error.data);
    throw error;
  }
}

export function fileHandlers(files: FileAccess): Pick<AcpClientHandlers, 'readTextFile' | 'writeTextFile'> {
  return {
    readTextFile: (p) => served(async () => ({ content: await files.readTextFile({ path: p.path, line: p.line ?? null, limit: p.limit ?? null }) })),
    writeTextFile: (p) =>
      served(async () => {
        await files.writeTextFile({ path: p.path, content: p.content });
        return {};
      }),
  };
}

export function terminalHandlers(terminals: TerminalAccess): NonNullable<AcpClientHandlers['terminal']> {
  return {
    create: (p) =>
      served(async () => ({
        terminalId: await terminals.create({
          command: p.command,
          args: p.args ?? [],
          env: p.env ?? [],
          cwd: p.cwd ?? null,
          outputByteLimit: p.outputByteLimit ?? null,
        }),
      })),
    output: (p) => served(() => terminals.output(p.terminalId)),
    waitForExit: (p) => served(() => terminals.waitForExit(p.terminalId)),
    kill: (p) =>
      served(async () => {
        await terminals.kill(p.terminalId);
        return {};
      }),
    release: (p) =>
      served(async () => {
        await terminals.release(p.terminalId);
        return {};
      }),
  };
}
