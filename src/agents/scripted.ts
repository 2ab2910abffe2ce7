/**
 * How each preset talks to our scripted model (src/scriptedModel) instead of its vendor's: the config files and
 * environment that point it at a model server on 127.0.0.1, inside a sandboxed home. Used by the
 * compatibility check's turns, the tests and the offline demo.
 *
 * `sandboxEnv()` is a COMPLETE environment, not an overlay: HOME, XDG_* and TMPDIR under `scratch`,
 * PATH from the caller, locale variables, and nothing else — no real credentials (ANTHROPIC_*, OPENAI_*,
 * GEMINI_*, …) leak in. Only the model is configured here; what makes an agent ask for permission is
 * the preset's own args and env (src/agents/presets.ts), so a scripted run checks the preset as shipped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ScriptedOptions {
  /** A folder of the run's own: the sandboxed home and every config file go under it. */
  scratch: string;
  /** Root URL of the scripted model server. */
  modelUrl: string;
  workspace: string;
  /**
   * opencode only: a folder with opencode's own plugin dependencies installed (scripts/setup-agents.sh's
   * `config-deps`). Copied into its fresh config folder, so opencode does not install them at start (about 10
   * CPU-seconds and a registry fetch each time).
   */
  opencodeDeps?: string;
}

/** What to add to the preset's launch to run it against the scripted model. */
export interface ScriptedLaunch {
  env: Record<string, string>;
  /** Extra arguments after the preset's own (omp's `--model`). */
  args: string[];
}

export const SCRIPTED_API_KEY = 'sk-scripted-test-key';

const PASS_THROUGH = ['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'];

function mkdirs(...dirs: string[]): void {
  for (const d of dirs) fs.mkdirSync(d, { recursive: true });
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The sandboxed environment (see the file comment); `extraPath` goes first on PATH. */
export function sandboxEnv(scratch: string, extraPath: string[] = []): Record<string, string> {
  const home = path.join(scratch, 'home');
  const env: Record<string, string> = {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(scratch, 'xdg', 'config'),
    XDG_DATA_HOME: path.join(scratch, 'xdg', 'data'),
    XDG_CACHE_HOME: path.join(scratch, 'xdg', 'cache'),
    XDG_STATE_HOME: path.join(scratch, 'xdg', 'state'),
    XDG_RUNTIME_DIR: path.join(scratch, 'xdg', 'runtime'),
    TMPDIR: path.join(scratch, 'tmp'),
    TMP: path.join(scratch, 'tmp'),
    TEMP: path.join(scratch, 'tmp'),
    PATH: [...extraPath, process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(path.delimiter),
    NO_COLOR: '1',
    CI: '1',
    DO_NOT_TRACK: '1',
    NO_UPDATE_NOTIFIER: '1',
    npm_config_update_notifier: 'false',
  };
  for (const k of PASS_THROUGH) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  mkdirs(home, env.XDG_CONFIG_HOME!, env.XDG_DATA_HOME!, env.XDG_CACHE_HOME!, env.XDG_STATE_HOME!, env.TMPDIR!);
  fs.mkdirSync(env.XDG_RUNTIME_DIR!, { recursive: true, mode: 0o700 });
  return env;
}

/** OpenAI-style base URL ("…/v1") from the model server's root URL. */
export function openaiBase(modelUrl: string): string {
  const u = modelUrl.replace(/\/+$/, '');
  return u.endsWith('/v1') ? u : `${u}/v1`;
}

/** Root URL without a trailing /v1 (the Anthropic and Gemini SDKs add their own version prefix). */
function rootUrl(modelUrl: string): string {
  return modelUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Upstream pi's models.json + settings.json (provider `scripted`, model `scripted-model`) in `piDir`. */
export function writePiConfig(piDir: string, modelUrl: string): void {
  writeJson(path.join(piDir, 'models.json'), {
    providers: {
      scripted: {
        baseUrl: openaiBase(modelUrl),
        api: 'openai-completions',
        apiKey: SCRIPTED_API_KEY,
        models: [
          {
            id: 'scripted-model',
            name: 'Scripted model',
            reasoning: false,
            input: ['text'],
            contextWindow: 128000,
            maxTokens: 8192,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          },
        ],
      },
    },
  });
  writeJson(path.join(piDir, 'settings.json'), { defaultProvider: 'scripted', defaultModel: 'scripted-model', quietStartup: true });
}

type Setup = (o: ScriptedOptions, env: Record<string, string>) => ScriptedLaunch;

const SETUPS: Record<string, Setup> = {
  opencode({ modelUrl, opencodeDeps }, env) {
    const configDir = path.join(env.XDG_CONFIG_HOME!, 'opencode');
    if (opencodeDeps && fs.existsSync(path.join(opencodeDeps, 'node_modules'))) {
      for (const name of ['package.json', 'package-lock.json', 'node_modules']) {
        fs.cpSync(path.join(opencodeDeps, name), path.join(configDir, name), { recursive: true, verbatimSymlinks: true });
      }
    }
    writeJson(path.join(configDir, 'opencode.json'), {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: 'scripted/scripted-model',
      small_model: 'scripted/scripted-model',
      enabled_providers: ['scripted'],
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          // opencode names a model "<provider>/<model>": not "Scripted model/Scripted model".
          name: 'Local test server',
          options: { baseURL: openaiBase(modelUrl), apiKey: SCRIPTED_API_KEY },
          models: { 'scripted-model': { name: 'Scripted model', tool_call: true, limit: { context: 128000, output: 8192 } } },
        },
      },
    });
    return {
      args: [],
      env: {
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
      },
    };
  },
  'codex-acp'({ scratch, modelUrl }) {
    const codexHome = path.join(scratch, 'codex');
    mkdirs(codexHome);
    const toml = [
      // A known model name, or codex offers no apply_patch tool.
      'model = "gpt-5.2-codex"',
      'model_provider = "scripted"',
      // Shell tools without bubblewrap; the approval policy comes from the preset's args.
      'sandbox_mode = "danger-full-access"',
      'check_for_update_on_startup = false',
      'hide_agent_reasoning = true',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = ${JSON.stringify(openaiBase(modelUrl))}`,
      'env_key = "SCRIPTED_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(codexHome, 'config.toml'), toml);
    return { args: [], env: { CODEX_HOME: codexHome, SCRIPTED_API_KEY, RUST_LOG: 'error' } };
  },
  'claude-agent-acp'({ scratch, modelUrl }) {
    const configDir = path.join(scratch, 'claude');
    writeJson(path.join(configDir, 'settings.json'), { permissions: { defaultMode: 'default' } });
    return {
      args: [],
      env: {
        ANTHROPIC_BASE_URL: rootUrl(modelUrl),
        ANTHROPIC_API_KEY: SCRIPTED_API_KEY,
        ANTHROPIC_MODEL: 'claude-sonnet-4-5',
        ANTHROPIC_SMALL_FAST_MODEL: 'claude-haiku-4-5',
        CLAUDE_CONFIG_DIR: configDir,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        // As root, claude refuses to run unless IS_SANDBOX is exactly "1" (or unset and not root).
        IS_SANDBOX: '1',
      },
    };
  },
  gemini({ modelUrl, workspace }, env) {
    writeJson(path.join(env.HOME!, '.gemini', 'settings.json'), {
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      model: { name: 'gemini-2.5-flash' },
      ui: { hideBanner: true, hideTips: true },
    });
    writeJson(path.join(env.HOME!, '.gemini', 'trustedFolders.json'), { [workspace]: 'TRUST_FOLDER' });
    return {
      args: [],
      env: {
        GEMINI_API_KEY: SCRIPTED_API_KEY,
        GOOGLE_GEMINI_BASE_URL: rootUrl(modelUrl),
        GEMINI_MODEL: 'gemini-2.5-flash',
        GEMINI_CLI_NO_RELAUNCH: 'true',
        GEMINI_TELEMETRY_ENABLED: 'false',
      },
    };
  },
  qwen({ modelUrl }, env) {
    writeJson(path.join(env.HOME!, '.qwen', 'settings.json'), {
      security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      model: { name: 'scripted-model' },
    });
    return {
      args: [],
      env: { OPENAI_API_KEY: SCRIPTED_API_KEY, OPENAI_BASE_URL: openaiBase(modelUrl), OPENAI_MODEL: 'scripted-model', QWEN_CODE_NO_RELAUNCH: 'true' },
    };
  },
  'pi-acp'({ scratch, modelUrl }) {
    const piDir = path.join(scratch, 'pi');
    writePiConfig(piDir, modelUrl);
    return { args: [], env: { PI_CODING_AGENT_DIR: piDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' } };
  },
  pi({ scratch, modelUrl }) {
    const piDir = path.join(scratch, 'pi');
    writePiConfig(piDir, modelUrl);
    return { args: [], env: { PI_CODING_AGENT_DIR: piDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' } };
  },
  omp({ modelUrl }, env) {
    const agentDir = path.join(env.HOME!, '.omp', 'agent');
    fs.mkdirSync(agentDir, { recursive: true });
    fs.writeFileSync(
      path.join(agentDir, 'models.yml'),
      [
        'providers:',
        '  scripted:',
        `    baseUrl: ${openaiBase(modelUrl)}`,
        '    api: openai-completions',
        `    apiKey: ${SCRIPTED_API_KEY}`,
        '    models:',
        '      - id: scripted-model',
        '        name: Scripted model',
        '        reasoning: false',
        '        input: [text]',
        '        contextWindow: 128000',
        '        maxTokens: 8192',
        '',
      ].join('\n'),
    );
    return { args: ['--model', 'scripted/scripted-model'], env: { PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' } };
  },
};

/** Presets whose config for the scripted model is known. */
export function hasScriptedSetup(presetId: string): boolean {
  return presetId in SETUPS;
}

/**
 * Writes `presetId`'s config for the scripted model under `o.scratch` and returns the launch additions;
 * `env` is the sandboxed environment (from `sandboxEnv`), which config writers may read (HOME, XDG_*).
 */
export function scriptedSetup(presetId: string, o: ScriptedOptions, env: Record<string, string>): ScriptedLaunch {
  const setup = SETUPS[presetId];
  if (!setup) throw new Error(`No scripted-model setup for "${presetId}"`);
  return setup(o, env);
}
