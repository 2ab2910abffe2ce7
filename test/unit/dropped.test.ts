import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droppedUris, sizeText } from '../../webview-ui/src/dropped';

/** A drop's data as the webview's DataTransfer gives it: by type, '' for what it lacks. */
const drop = (data: Record<string, string>) => ({ getData: (type: string) => data[type] ?? '' }) as unknown as DataTransfer;

test('a drop from VS Code gives every URI of its own list; resourceurls, then text/uri-list (comments skipped), else none', () => {
  const two = 'file:///w/a.ts\r\nfile:///w/src/';
  assert.deepEqual(droppedUris(drop({ 'application/vnd.code.uri-list': two, 'text/uri-list': 'file:///w/a.ts' })), ['file:///w/a.ts', 'file:///w/src/']);
  assert.deepEqual(droppedUris(drop({ resourceurls: '["file:///w/a.ts","file:///w/b.ts"]', 'text/uri-list': 'file:///w/a.ts' })), ['file:///w/a.ts', 'file:///w/b.ts']);
  assert.deepEqual(droppedUris(drop({ resourceurls: 'not json', 'text/uri-list': '# a comment\nfile:///w/c.ts\n' })), ['file:///w/c.ts']);
  assert.deepEqual(droppedUris(drop({ 'text/plain': '/w/a.ts' })), [], 'plain text is no file');
  assert.deepEqual(droppedUris(null), []);
});

test('a chip says a size in B, KB or MB', () => {
  assert.equal(sizeText(812), '812 B');
  assert.equal(sizeText(4300), '4.2 KB');
  assert.equal(sizeText(300 * 1024), '300 KB');
  assert.equal(sizeText(1.3 * 1024 * 1024), '1.3 MB');
});
