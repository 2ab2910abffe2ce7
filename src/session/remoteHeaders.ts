/**
 * Extra headers a remote agent entry sends (`headers`), whose values never hold a secret in settings: a value is
 * literal text, `${secret:NAME}` (the editor asks once and keeps it in its secret storage; the CLI refuses it),
 * or `${env:NAME}` (the environment of the editor's extension host or of the CLI). Headers that carry
 * credentials by their name (Cookie, Proxy-Authorization, any name with auth/key/token/secret/password) must use a
 * reference; the entry's own token (Authorization) and API key (X-Api-Key) have their own prompt and are not
 * headers here.
 */

const REFERENCE = /^\$\{(secret|env):([A-Za-z0-9_.-]+)\}$/;
const CREDENTIAL_NAME = /^(proxy-authorization|cookie)$|auth|key|token|secret|passw/i;
/** Headers the transport sets itself (the entry's token or key among them): not overridable from settings. */
const RESERVED = /^(host|connection|upgrade|content-length|content-type|accept|transfer-encoding|sec-websocket-.*|acp-connection-id|authorization|x-api-key)$/i;

export type HeaderReference = { kind: 'secret' | 'env'; name: string };

export function headerReference(value: string): HeaderReference | undefined {
  const m = REFERENCE.exec(value);
  return m ? { kind: m[1] as 'secret' | 'env', name: m[2]! } : undefined;
}

/** The entry's `headers` checked: an Error names what is wrong (a secret written in settings, a reserved name). */
export function validHeaders(value: unknown, where: string): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: "headers" must map header names to strings`);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new Error(`${where}: "${name}" is not a header name`);
    if (typeof v !== 'string') throw new Error(`${where}: the value of header "${name}" must be a string`);
    if (RESERVED.test(name)) throw new Error(`${where}: header "${name}" is set by Atrium itself`);
    if (/[\r\n]/.test(v)) throw new Error(`${where}: the value of header "${name}" has a line break`);
    if (v.includes('${') && !headerReference(v)) throw new Error(`${where}: the value of header "${name}" must be text, \${secret:NAME} or \${env:NAME}, whole`);
    if (CREDENTIAL_NAME.test(name) && !headerReference(v)) {
      throw new Error(`${where}: header "${name}" carries a credential: write \${secret:NAME} (kept in the secret storage) or \${env:NAME}, never the value itself`);
    }
    out[name] = v;
  }
  return out;
}

/** The headers with their references looked up; a reference that finds nothing fails the start, naming it. */
export async function resolveHeaders(
  headers: Record<string, string> | undefined,
  lookup: { secret(name: string): Promise<string | undefined>; env(name: string): string | undefined },
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const ref = headerReference(value);
    if (!ref) {
      out[name] = value;
      continue;
    }
    const found = ref.kind === 'secret' ? await lookup.secret(ref.name) : lookup.env(ref.name);
    if (found === undefined || found === '') throw new Error(`Header "${name}" needs ${ref.kind === 'secret' ? `the secret "${ref.name}"` : `the environment variable ${ref.name}`}, which is not set`);
    if (/[\r\n]/.test(found)) throw new Error(`Header "${name}": the value of ${value} has a line break`);
    out[name] = found;
  }
  return out;
}
