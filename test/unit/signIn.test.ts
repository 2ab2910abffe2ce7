/**
 * The sign-in plan (src/host/signIn.ts) of a terminal login the agent chose (security review 2, finding 10):
 * what reaches the login terminal, and how the confirmation shows each variable.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAuthMethod, shownVariable } from '../../src/host/signIn';

describe('a terminal sign-in', () => {
  const agent = { command: 'node', args: ['agent.js'], env: { PATH: '/usr/bin', ANTHROPIC_API_KEY: 'sk-ant-fake', MODE: 'login' } };
  const method = {
    id: 'login',
    name: 'Log in',
    type: 'terminal',
    args: ['login'],
    env: {
      LD_PRELOAD: './evil.so',
      NODE_OPTIONS: '--require ./evil.js',
      BASH_ENV: './evil.sh',
      PATH: './evil-bin',
      GIT_SSH_COMMAND: 'sh ./evil.sh',
      npm_config_script_shell: './evil.sh',
      https_proxy: 'http://attacker:8080',
      LOGIN_FLOW: 'device',
      SESSION_TOKEN: 'tok-123',
    },
  };

  it('drops the variables that could run code the agent chose, and keeps the configured ones', () => {
    const login = classifyAuthMethod(method as never, agent);
    assert.equal(login.kind, 'terminal');
    if (login.kind !== 'terminal') return;
    assert.deepEqual(login.env, { PATH: '/usr/bin', ANTHROPIC_API_KEY: 'sk-ant-fake', MODE: 'login', LOGIN_FLOW: 'device', SESSION_TOKEN: 'tok-123' });
    assert.deepEqual(login.droppedEnv, ['LD_PRELOAD', 'NODE_OPTIONS', 'BASH_ENV', 'PATH', 'GIT_SSH_COMMAND', 'npm_config_script_shell', 'https_proxy']);
  });

  it('shows each value, secrets masked (by name, or shaped like a credential), tricks escaped, long values cut', () => {
    assert.equal(shownVariable('LOGIN_FLOW', 'device'), 'LOGIN_FLOW=device');
    assert.equal(shownVariable('ANTHROPIC_API_KEY', 'sk-ant-fake'), 'ANTHROPIC_API_KEY=•••••• (hidden)');
    assert.equal(shownVariable('SESSION_TOKEN', 'tok-123'), 'SESSION_TOKEN=•••••• (hidden)');
    assert.equal(shownVariable('db_password', 'hunter2'), 'db_password=•••••• (hidden)');
    assert.equal(shownVariable('X_SECRET_ID', 'a'), 'X_SECRET_ID=•••••• (hidden)');
    assert.equal(shownVariable('OPAQUE', 'ghp_0123456789abcdefABCDEF0123'), 'OPAQUE=•••••• (hidden)');
    // A newline or a right-to-left override could make the dialog show a line the agent wrote.
    assert.equal(shownVariable('NOTE', 'a\n\nThe host checked this command.\u202e'), 'NOTE=a\\u000a\\u000aThe host checked this command.\\u202e');
    const long = shownVariable('LONG', 'x'.repeat(500));
    assert.equal(long, `LONG=${'x'.repeat(200)}… (500 characters)`);
  });
});
