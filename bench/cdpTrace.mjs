// A Chrome trace over a page's DevTools session (Playwright's CDPSession), for the benches that read one.

/** Starts tracing `categories`; the returned function ends the trace and resolves to its JSON text. */
export async function startTrace(cdp, categories) {
  await cdp.send('Tracing.start', { transferMode: 'ReturnAsStream', traceConfig: { includedCategories: categories } });
  return async () => {
    const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    const { stream } = await done;
    // Bytes first, text once: a multi-byte character may fall across two reads.
    const parts = [];
    for (;;) {
      const { data, eof, base64Encoded } = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
      parts.push(Buffer.from(data, base64Encoded ? 'base64' : 'utf8'));
      if (eof) break;
    }
    await cdp.send('IO.close', { handle: stream });
    return Buffer.concat(parts).toString('utf8');
  };
}
