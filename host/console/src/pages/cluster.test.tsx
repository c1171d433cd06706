// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterStatus } from '../api/types';
import { ago, ClusterTable, clusterSummary } from './Cluster';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let host: HTMLDivElement;
let root: Root;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

const now = Date.parse('2026-01-02T03:04:05Z');

const three: ClusterStatus = {
  clustered: true,
  cluster: 'prod',
  node: 'a',
  stream_last: 42,
  nodes: [
    { name: 'a', version: '0.1.0', live: true, last_seen: '2026-01-02T03:04:04.750Z', skills: ['acme.echo', 'acme.fetch'], sidecars_alive: 2, calls_per_second: 12.34, applied: 42 },
    { name: 'b', version: '0.1.0', live: true, last_seen: '2026-01-02T03:04:04.5Z', skills: ['acme.echo'], sidecars_alive: 1, calls_per_second: 0, applied: 40 },
    { name: 'c', live: false, last_seen: '2026-01-02T03:03:00Z', skills: null, sidecars_alive: 0, calls_per_second: 0, applied: 12 },
  ],
};

function cells(tr: Element): string[] {
  return [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '');
}

describe('Cluster page', () => {
  it('lists every node with its state, version, skills, sidecars, rate, applied sequence and last heartbeat', () => {
    act(() => root.render(<ClusterTable status={three} now={now} />));
    const rows = [...host.querySelectorAll('[data-testid="cluster-node"]')];
    expect(rows.map((r) => r.getAttribute('data-node'))).toEqual(['a', 'b', 'c']);
    expect(cells(rows[0])).toEqual(['a (this node)', 'live', '0.1.0', 'acme.echo, acme.fetch', '2', '12.3', '42', '0.3 s ago']);
    expect(cells(rows[1])).toEqual(['b', 'live', '0.1.0', 'acme.echo', '1', '0.0', '40 (catching up)', '0.5 s ago']);
    expect(cells(rows[2])).toEqual(['c', 'lost', '—', '—', '0', '0.0', '12 (catching up)', '2026-01-02 03:03:00Z']);
    expect(rows[2].getAttribute('data-live')).toBe('false');
    expect(rows[0].querySelector('a')?.getAttribute('href')).toBe('/skills/acme.echo');
    expect(host.querySelector('[data-testid="cluster-summary"]')?.textContent).toBe('Cluster prod, answered by a: 3 nodes, ops stream at 42.');
  });

  it('shows a daemon that is not clustered as a cluster of one, without stream positions', () => {
    const one: ClusterStatus = {
      clustered: false,
      node: 'vm',
      stream_last: 0,
      nodes: [{ name: 'vm', version: '0.1.0', live: true, last_seen: '2026-01-02T03:04:05Z', skills: [], sidecars_alive: 0, calls_per_second: 0, applied: 0 }],
    };
    act(() => root.render(<ClusterTable status={one} now={now} />));
    const rows = [...host.querySelectorAll('[data-testid="cluster-node"]')];
    expect(rows.map(cells)).toEqual([['vm (this node)', 'live', '0.1.0', '—', '0', '0.0', '—', '0.0 s ago']]);
    expect(clusterSummary(one)).toBe('Not clustered: vm is a cluster of one.');
  });

  it('says how long ago a heartbeat was, and nothing for an unknown time', () => {
    expect(ago('2026-01-02T03:04:03Z', now)).toBe('2.0 s ago');
    expect(ago('2026-01-02T03:04:06Z', now)).toBe('0.0 s ago');
    expect(ago('0001-01-01T00:00:00Z', now)).toBe('—');
    expect(ago(undefined, now)).toBe('—');
  });
});
