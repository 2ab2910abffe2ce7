/**
 * The errors of an ACP connection: the JSON-RPC codes we answer and understand, our own timeouts and
 * version refusal, and an agent's error answer made readable (also when it broke the error's shape).
 */
import { ErrorCodes as JsonRpcCodes, ResponseError } from 'vscode-jsonrpc/node';
import { truncate } from '../core/log';

export const ErrorCodes = {
  AuthRequired: -32000,
  ResourceNotFound: -32002,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
} as const;

export class RequestTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`The agent did not answer ${method} within ${Math.round(timeoutMs / 1000)} s`);
    this.name = 'RequestTimeoutError';
  }
}

export class ProtocolVersionError extends Error {
  constructor(
    readonly agentVersion: unknown,
    supported: { min: number; max: number },
  ) {
    super(`The agent speaks ACP protocol version ${JSON.stringify(agentVersion)}; ` + `Atrium speaks versions ${supported.min}–${supported.max}. Update the agent or Atrium.`);
    this.name = 'ProtocolVersionError';
  }
}

/** An agent's error answer as an Error a person can read, also when the agent broke the error's shape. */
export function clearError(method: string, error: unknown): Error {
  // vscode-jsonrpc gives an error without a numeric code UnknownErrorCode: its shape was wrong.
  if (error instanceof ResponseError && error.message && typeof error.code === 'number' && error.code !== JsonRpcCodes.UnknownErrorCode) return error;
  // vscode-jsonrpc's words for an answer with neither `result` nor `error` (e.g. `"error": null`).
  if (error instanceof Error && /neither a result nor an error/.test(error.message)) {
    return new ResponseError(ErrorCodes.InternalError, `The agent answered ${method} with neither a result nor an error`);
  }
  if (error instanceof Error && error.message && !(error instanceof ResponseError)) return error;
  const detail = error instanceof ResponseError ? JSON.stringify({ code: error.code, message: error.message, data: error.data }) : String(error);
  return new ResponseError(ErrorCodes.InternalError, `The agent answered ${method} with a malformed error (${truncate(detail ?? '', 200)})`);
}
