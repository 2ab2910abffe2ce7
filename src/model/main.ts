/**
 * CLI for the scripted model: `node out/test/model/main.js [--port N] [--exit-on-stdin-close]`.
 * Prints `{"url":"http://127.0.0.1:PORT"}` on stdout once listening and logs each request to stderr.
 */
import { startScriptedModel } from './scriptedModel';

function parseArgs(argv: string[]): { port: number; exitOnStdinClose: boolean } {
  let port = 0;
  let exitOnStdinClose = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--exit-on-stdin-close') exitOnStdinClose = true;
    else if (arg === '--port' || arg?.startsWith('--port=')) {
      const value = arg === '--port' ? argv[++i] : arg.slice('--port='.length);
      port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${value ?? ''}`);
    } else throw new Error(`unknown argument ${arg ?? ''}; usage: main.js [--port N] [--exit-on-stdin-close]`);
  }
  return { port, exitOnStdinClose };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const model = await startScriptedModel({ port: args.port, log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${JSON.stringify({ url: model.url })}\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void model.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (args.exitOnStdinClose) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`scripted model: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
