/**
 * CLI for the scripted model: `node out/src/scriptedModel/main.js [--port N] [--workspace DIR] [--exit-on-stdin-close]`.
 * Prints `{"url":"http://127.0.0.1:PORT"}` on stdout once listening and logs each request to stderr.
 * `--workspace`: the folder the agents work in, named in the greeting's example.
 */
import { isAbsolute } from 'node:path';
import { startScriptedModel } from './scriptedModel';

const USAGE = 'usage: main.js [--port N] [--workspace DIR] [--exit-on-stdin-close]';

function parseArgs(argv: string[]): { port: number; workspace?: string; exitOnStdinClose: boolean } {
  let port = 0;
  let workspace: string | undefined;
  let exitOnStdinClose = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--exit-on-stdin-close') exitOnStdinClose = true;
    else if (arg === '--workspace' || arg?.startsWith('--workspace=')) {
      workspace = arg === '--workspace' ? argv[++i] : arg.slice('--workspace='.length);
      if (!workspace || !isAbsolute(workspace)) throw new Error(`--workspace needs an absolute folder (got ${workspace ?? 'nothing'}); ${USAGE}`);
    } else if (arg === '--port' || arg?.startsWith('--port=')) {
      const value = arg === '--port' ? argv[++i] : arg.slice('--port='.length);
      port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${value ?? ''}`);
    } else throw new Error(`unknown argument ${arg ?? ''}; ${USAGE}`);
  }
  return { port, ...(workspace ? { workspace } : {}), exitOnStdinClose };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const model = await startScriptedModel({ port: args.port, ...(args.workspace ? { workspace: args.workspace } : {}), log: (line) => process.stderr.write(`${line}\n`) });
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
