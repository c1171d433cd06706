import { ApiError, errorOf, getToken, reportUnauthorized } from '../api/client';
import type { StreamEvent } from '../api/types';
import { SSEParser } from './parser';

// Follows GET /v1/events. EventSource cannot send the Authorization header,
// so the stream is read with fetch and parsed by SSEParser. After a drop it
// reconnects with ?after=<last id> (backing off 1 s, 2 s, … up to 15 s) so
// no journaled event is missed; it stops for good when signal aborts (the
// page that started it went away) or on a 401.

export type StreamStatus = 'connecting' | 'open' | 'retrying' | 'stopped';

export interface FollowOptions {
  /** Replay the journal after this id first; undefined = only new events. */
  after?: number;
  signal: AbortSignal;
  onEvent: (e: StreamEvent) => void;
  onStatus?: (s: StreamStatus, detail?: string) => void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

export async function followEvents(opts: FollowOptions): Promise<void> {
  const { signal, onEvent } = opts;
  const status = opts.onStatus ?? (() => {});
  let after = opts.after;
  let failures = 0;
  while (!signal.aborted) {
    status(failures === 0 ? 'connecting' : 'retrying');
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      const token = getToken();
      if (token) headers.Authorization = `Bearer ${token}`;
      const url = after === undefined ? '/v1/events' : `/v1/events?after=${after}`;
      const res = await fetch(url, { headers, signal, cache: 'no-store', credentials: 'omit' });
      if (!res.ok) {
        const err = await errorOf(res);
        if (res.status === 401) {
          reportUnauthorized(err);
          status('stopped', err.message);
          return;
        }
        throw err;
      }
      if (!res.body) throw new Error('the response has no body');
      status('open');
      failures = 0;
      const parser = new SSEParser();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const ev of parser.feed(value)) {
          if (ev.id !== '' && /^\d+$/.test(ev.id)) after = Number(ev.id);
          try {
            onEvent(JSON.parse(ev.data) as StreamEvent);
          } catch {
            // A malformed event is skipped; the stream goes on.
          }
        }
      }
      parser.end();
    } catch (e) {
      if (signal.aborted) break;
      status('retrying', e instanceof ApiError ? `${e.code}: ${e.message}` : (e as Error).message);
    }
    if (signal.aborted) break;
    failures++;
    await sleep(Math.min(15000, 1000 * 2 ** Math.min(failures - 1, 4)), signal);
  }
  status('stopped');
}
