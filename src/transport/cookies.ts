/**
 * The cookies a remote agent's server sets, kept for one agent entry while we run and presented on every request
 * to it (each Streamable HTTP request, each WebSocket upgrade): a load balancer pins a connection to its backend
 * with them, and a reconnect goes back to the backend that holds the session. Names and values only, as the
 * SDK's affinity store does (its `AcpCookieStore` shape, so the HTTP client takes it as is): no domain, path or
 * expiry, since they only ever go back to the one URL that set them.
 */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Takes the `Set-Cookie` values of a response. */
  store(headers: Headers): void {
    for (const value of headers.getSetCookie()) this.set(value);
  }

  /** Takes `Set-Cookie` values as a Node response gives them (a WebSocket upgrade). */
  storeRaw(values: string | string[] | undefined): void {
    for (const value of typeof values === 'string' ? [values] : (values ?? [])) this.set(value);
  }

  /** Adds ours to a request's `Cookie` header (the caller's own cookies win). */
  apply(headers: Headers): void {
    const merged = new Map(this.cookies);
    for (const [name, value] of pairs(headers.get('Cookie') ?? '')) merged.set(name, value);
    if (merged.size) headers.set('Cookie', [...merged].map(([n, v]) => `${n}=${v}`).join('; '));
  }

  /** The `Cookie` header value, if any cookie is kept. */
  header(): string | undefined {
    return this.cookies.size ? [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ') : undefined;
  }

  clear(): void {
    this.cookies.clear();
  }

  private set(setCookie: string): void {
    const [pair] = pairs(setCookie.split(';', 1)[0] ?? '');
    if (pair) this.cookies.set(pair[0], pair[1]);
  }
}

function pairs(header: string): [string, string][] {
  return header.split(';').flatMap((part) => {
    const i = part.indexOf('=');
    const name = i > 0 ? part.slice(0, i).trim() : '';
    return name ? [[name, part.slice(i + 1).trim()] as [string, string]] : [];
  });
}

const jars = new Map<string, CookieJar>();

/** The jar of one agent entry (its name and URL), the same across its reconnects. */
export function cookieJarFor(name: string, url: string): CookieJar {
  const key = `${name}\n${url}`;
  let jar = jars.get(key);
  if (!jar) {
    jar = new CookieJar();
    jars.set(key, jar);
  }
  return jar;
}
