import { useEffect, useState } from 'react';
import type { StreamEvent } from '../api/types';
import { Badge, time } from '../components/common';
import { Link } from '../router';
import { followEvents, type StreamStatus } from '../sse/stream';

/** How many events the page keeps. */
export const MAX_EVENTS = 500;

export function EventsPage() {
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [detail, setDetail] = useState('');
  const [text, setText] = useState('');

  useEffect(() => {
    const ac = new AbortController();
    // Replays the journal from its start, then follows it.
    followEvents({
      after: 0,
      signal: ac.signal,
      onStatus: (s, d) => {
        setStatus(s);
        setDetail(d ?? '');
      },
      onEvent: (e) => setEvents((xs) => (e.id && xs.some((x) => x.id === e.id) ? xs : [e, ...xs].slice(0, MAX_EVENTS))),
    });
    return () => ac.abort();
  }, []);

  const t = text.trim().toLowerCase();
  const shown = t ? events.filter((e) => `${e.kind} ${e.skill_id} ${e.status ?? ''} ${e.reason ?? ''}`.toLowerCase().includes(t)) : events;

  return (
    <>
      <div className="page-head">
        <h1>Events</h1>
        <p className="muted" role="status">
          Stream: <span data-testid="events-status">{status}</span>
          {detail ? ` (${detail})` : ''}
        </p>
      </div>
      <form className="filters" role="search" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="ev-filter">Filter</label>
          <input id="ev-filter" type="search" value={text} onChange={(e) => setText(e.target.value)} data-testid="events-filter" />
        </div>
        <button type="button" className="secondary" onClick={() => setEvents([])}>
          Clear
        </button>
      </form>
      <div className="table-wrap" tabIndex={0}>
        <table className="data" data-testid="events-table">
          <caption>
            {shown.length} event{shown.length === 1 ? '' : 's'}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Skill</th>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Principal</th>
            </tr>
          </thead>
          <tbody aria-live="polite" aria-relevant="additions">
            {shown.map((e, i) => (
              <tr key={`${e.id}-${i}`} data-testid="event-row" data-kind={e.kind} data-skill-id={e.skill_id}>
                <th scope="row">{e.id || '—'}</th>
                <td>
                  <time dateTime={e.at}>{time(e.at)}</time>
                </td>
                <td>{e.kind}</td>
                <td>{e.skill_id ? <Link to={`/skills/${encodeURIComponent(e.skill_id)}`}>{e.skill_id}</Link> : '—'}</td>
                <td>{e.version || '—'}</td>
                <td>{e.status ? <Badge value={e.status} /> : '—'}</td>
                <td className="wrap">{e.reason || '—'}</td>
                <td>{e.operator_principal || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
