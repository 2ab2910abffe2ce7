import type { HostEvent, HostMessage, RequestMethod, RequestParams, RequestResult } from '../../src/shared/chatProtocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export const vscodeApi = acquireVsCodeApi();

let nextId = 1;
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
const listeners = new Set<(e: HostEvent) => void>();

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const msg = e.data;
  if (!msg || typeof msg !== 'object') return;
  if (msg.kind === 'response') {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new Error(msg.error));
  } else if (msg.kind === 'event') {
    for (const l of listeners) l(msg.event);
  }
});

/** One typed request to the extension; resolves with its answer. */
export function request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
    vscodeApi.postMessage({ kind: 'request', id, method, params });
  });
}

/** Fire and forget; failures are logged to the webview console (and shown by the host where it matters). */
export function send<M extends RequestMethod>(method: M, params: RequestParams<M>): void {
  request(method, params).catch((e: Error) => console.error(`${method} failed: ${e.message}`));
}

export function onEvent(listener: (e: HostEvent) => void): void {
  listeners.add(listener);
}
