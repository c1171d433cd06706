import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../api/types';
import { followEvents } from './stream';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('followEvents', () => {
  it('reconnects after a drop with ?after=<last id> and stops on abort', async () => {
    vi.useFakeTimers();
    const urls: string[] = [];
    const ac = new AbortController();
    const got: StreamEvent[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        urls.push(url);
        if (urls.length === 1) {
          return new Response(body([': palyra-host events\n\n', 'id: 3\nevent: skill:quarantined\ndata: {"id":3,"kind":"skill:quarantined"}\n\n', 'id: 4\nevent: skill:enabled\ndata: {"id":4,"kind":"skill:enabled"}\n\n']), { status: 200 });
        }
        return new Response(body(['id: 5\nevent: skill:removed\ndata: {"id":5,"kind":"skill:removed"}\n\n']), { status: 200 });
      }),
    );
    const done = followEvents({
      after: 0,
      signal: ac.signal,
      onEvent: (e) => {
        got.push(e);
        if (e.id === 5) ac.abort();
      },
    });
    await vi.runAllTimersAsync();
    await done;
    expect(urls).toEqual(['/v1/events?after=0', '/v1/events?after=4']);
    expect(got.map((e) => e.kind)).toEqual(['skill:quarantined', 'skill:enabled', 'skill:removed']);
  });

  it('stops on a 401', async () => {
    const statuses: string[] = [];
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'no' } }), { status: 401 })));
    await followEvents({ signal: new AbortController().signal, onEvent: () => {}, onStatus: (s) => statuses.push(s) });
    expect(statuses).toEqual(['connecting', 'stopped']);
  });
});
