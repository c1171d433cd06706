import { describe, expect, it } from 'vitest';
import { SSEParser, type SSEEvent } from './parser';

function parseAll(chunks: string[]): SSEEvent[] {
  const p = new SSEParser();
  return chunks.flatMap((c) => p.feed(c));
}

describe('SSEParser', () => {
  it.each([
    ['one event', ['id: 7\nevent: skill:quarantined\ndata: {"id":7}\n\n'], [{ id: '7', event: 'skill:quarantined', data: '{"id":7}' }]],
    ['default type is message', ['data: x\n\n'], [{ id: '', event: 'message', data: 'x' }]],
    ['multi-line data joins with \\n', ['data: a\ndata: b\n\n'], [{ id: '', event: 'message', data: 'a\nb' }]],
    ['only one space is dropped', ['data:  a\n\n'], [{ id: '', event: 'message', data: ' a' }]],
    ['no space after the colon', ['data:a\n\n'], [{ id: '', event: 'message', data: 'a' }]],
    ['field without colon', ['data\n\n'], [{ id: '', event: 'message', data: '' }]],
    ['comments are skipped', [': palyra-host events\n\n: heartbeat\n\ndata: x\n\n'], [{ id: '', event: 'message', data: 'x' }]],
    ['no data, no event', ['event: x\n\n'], []],
    ['unknown fields are ignored', ['foo: bar\ndata: x\n\n'], [{ id: '', event: 'message', data: 'x' }]],
    ['CRLF', ['id: 1\r\ndata: x\r\n\r\n'], [{ id: '1', event: 'message', data: 'x' }]],
    ['CR only', ['id: 1\rdata: x\r\r'], [{ id: '1', event: 'message', data: 'x' }]],
    ['CRLF split across chunks', ['data: x\r', '\n\r', '\n'], [{ id: '', event: 'message', data: 'x' }]],
    ['split anywhere', ['i', 'd: 4', '2\nev', 'ent: k\nda', 'ta: {"a"', ':1}\n', '\n'], [{ id: '42', event: 'k', data: '{"a":1}' }]],
    ['unterminated event is not dispatched', ['data: x\n'], []],
    ['id with NUL is ignored', ['id: 1\ndata: a\n\nid: 2\0\ndata: b\n\n'], [{ id: '1', event: 'message', data: 'a' }, { id: '1', event: 'message', data: 'b' }]],
    ['id persists across events', ['id: 5\ndata: a\n\ndata: b\n\n'], [{ id: '5', event: 'message', data: 'a' }, { id: '5', event: 'message', data: 'b' }]],
    ['event type resets', ['event: k\ndata: a\n\ndata: b\n\n'], [{ id: '', event: 'k', data: 'a' }, { id: '', event: 'message', data: 'b' }]],
    ['UTF-8 text', ['data: größe ✓\n\n'], [{ id: '', event: 'message', data: 'größe ✓' }]],
  ])('%s', (_, chunks, want) => {
    expect(parseAll(chunks)).toEqual(want);
  });

  it('gives the same events byte by byte', () => {
    const s = ': hi\n\nid: 1\nevent: skill:enabled\ndata: {"id":1}\n\nid: 2\nevent: skill:quarantined\ndata: {"id":2}\n\n';
    expect(parseAll(s.split(''))).toEqual(parseAll([s]));
    expect(parseAll([s])).toHaveLength(2);
  });

  it('reads retry', () => {
    const p = new SSEParser();
    p.feed('retry: 3000\n\nretry: x\n\n');
    expect(p.retry).toBe(3000);
  });

  it('tracks lastEventId for reconnecting', () => {
    const p = new SSEParser();
    p.feed('id: 9\ndata: a\n\n');
    expect(p.lastEventId).toBe('9');
    p.end();
    expect(p.feed('data: b\n\n')).toEqual([{ id: '9', event: 'message', data: 'b' }]);
  });
});
