/**
 * `agent-host serve`'s own options: the listen address (IPv4, [IPv6], names; loopback or not), the refusal of
 * a non-loopback address without --allow-remote, and the limits with their defaults and bad values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_LIMITS, parseListen, serveSettings } from '../../src/gateway/serveOptions';

test('listen addresses: loopback is 127.0.0.0/8, ::1 and localhost; anything else is not', () => {
  assert.deepEqual(parseListen('127.0.0.1:0'), { host: '127.0.0.1', port: 0, loopback: true });
  assert.deepEqual(parseListen('127.1.2.3:8411'), { host: '127.1.2.3', port: 8411, loopback: true });
  assert.deepEqual(parseListen('[::1]:8411'), { host: '::1', port: 8411, loopback: true });
  assert.deepEqual(parseListen('localhost:1'), { host: 'localhost', port: 1, loopback: true });
  for (const remote of ['0.0.0.0:0', '[::]:0', '192.168.1.5:80', 'box.example:80', '128.0.0.1:1']) assert.equal(parseListen(remote).loopback, false, remote);
  for (const bad of ['8411', '127.0.0.1', '::1:80', '[nothost]:80', '127.0.0.1:70000', '127.0.0.1:x']) assert.throws(() => parseListen(bad), /--listen/, bad);
});

test('a non-loopback address needs --allow-remote; limits default and refuse what is not a positive whole number', () => {
  assert.throws(() => serveSettings({ listen: '0.0.0.0:0' }), /--listen 0\.0\.0\.0:0 is not a loopback address: .*give --allow-remote/);
  assert.equal(serveSettings({ listen: '0.0.0.0:0', 'allow-remote': true }).listen.loopback, false);
  assert.throws(() => serveSettings({}), /give --listen HOST:PORT/);
  assert.deepEqual(serveSettings({ listen: '127.0.0.1:0' }).limits, DEFAULT_LIMITS);
  assert.deepEqual(serveSettings({ listen: '127.0.0.1:0', 'max-connections': '2', 'max-message-bytes': '65536', 'idle-timeout': '5' }).limits, {
    maxConnections: 2,
    maxMessageBytes: 65536,
    idleTimeoutMs: 5000,
  });
  for (const [flag, value] of [
    ['max-connections', '0'],
    ['max-message-bytes', '-1'],
    ['idle-timeout', '1.5'],
    ['max-connections', 'lots'],
  ] as const) {
    assert.throws(() => serveSettings({ listen: '127.0.0.1:0', [flag]: value }), new RegExp(`--${flag} must be a positive whole number`));
  }
});
