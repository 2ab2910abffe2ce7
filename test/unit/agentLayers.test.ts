/**
 * agentHost.agents from several settings layers: merged by name (a later layer's entry replaces an earlier
 * one in place), each entry's layer remembered, and an entry with the wrong shape reported and left out while
 * the others still count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeAgentLayers } from '../../src/session/agentConfig';

describe('mergeAgentLayers', () => {
  it("a workspace's or folder's entry cannot set the sandbox (it would loosen it for the command it names); the user's can", () => {
    const { agents, problems } = mergeAgentLayers([
      { source: 'User', value: [{ name: 'mine', command: 'a', sandbox: 'off' }] },
      { source: 'Workspace', value: [{ name: 'theirs', command: 'b', sandbox: { mode: 'off', allowWrite: ['/'] } }] },
      { source: 'Folder web', value: [{ name: 'folder', command: 'c', sandbox: 'read-only' }] },
    ]);
    assert.equal(agents.find((a) => a.name === 'mine')?.sandbox, 'off');
    assert.equal(agents.find((a) => a.name === 'theirs')?.sandbox, undefined);
    assert.equal(agents.find((a) => a.name === 'folder')?.sandbox, undefined);
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^Workspace: agents\[0\] \("theirs"\): only its "sandbox" is ignored/);
  });

  it('merges User, Remote and Workspace by name and remembers where each came from', () => {
    const { agents, sources, problems } = mergeAgentLayers([
      {
        source: 'User',
        value: [
          { name: 'mine', command: 'my-agent' },
          { name: 'shared', command: 'user-version' },
        ],
      },
      {
        source: 'Remote',
        value: [
          { name: 'demo', command: 'opencode', args: ['acp'] },
          { name: 'shared', command: 'remote-version' },
        ],
      },
      { source: 'Workspace', value: { agent_servers: { team: { command: 'team-agent' } } } },
    ]);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      agents.map((a) => `${a.name}=${a.command}`),
      ['mine=my-agent', 'shared=remote-version', 'demo=opencode', 'team=team-agent'],
    );
    assert.deepEqual(Object.fromEntries(sources), { mine: 'User', shared: 'Remote', demo: 'Remote', team: 'Workspace' });
  });

  it('reports each wrong entry with its layer and keeps the good ones', () => {
    const { agents, problems } = mergeAgentLayers([
      { source: 'User', value: [{ name: 'ok', command: 'x' }, { name: 'no-command' }, 'just a string', { name: 'bad-args', command: 'y', args: 'not a list' }] },
      { source: 'Remote', value: 42 },
      { source: 'Workspace', value: undefined },
    ]);
    assert.deepEqual(
      agents.map((a) => a.name),
      ['ok'],
    );
    assert.deepEqual(problems, [
      'User: agents[1]: "command" must be a non-empty string',
      'User: agents[2]: expected an object',
      'User: agents[3]: "args" must be a list of strings',
      'Remote: agentHost.agents must be a list of {name, command, …}',
    ]);
  });
});
