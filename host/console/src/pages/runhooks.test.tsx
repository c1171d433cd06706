// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallResponse, HookBinding } from '../api/types';
import { onFailureOf } from './Hooks';
import { HookNotes } from './RunTool';

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

const call = (extra: Partial<CallResponse>): CallResponse => ({
  invocation_id: 'i',
  skill_id: 's',
  version: '1',
  tool_id: 't',
  output: { echo: 'hi' },
  exit_code: 0,
  stats: { fuel_consumed: 1, peak_memory_bytes: 1, wall_time_ns: 1, capability_calls: 0, prepared: false },
  ...extra,
});

describe('run hook notes', () => {
  it('shows the preview and every annotation, a fail-open failure as such', () => {
    act(() =>
      root.render(
        <HookNotes
          r={call({
            preview: { hook_id: 'pv', text: 'a short summary' },
            annotations: [
              { hook_id: 'note', event: 'run:before_tool', message: 'looks fine' },
              { hook_id: 'slow', event: 'run:before_tool', code: 'hook_timeout', error: 'did not answer' },
            ],
          })}
        />,
      ),
    );
    expect(host.querySelector('[data-testid="call-preview"]')!.textContent).toContain('a short summary');
    const items = [...host.querySelectorAll('[data-testid="call-annotations"] li')].map((li) => li.textContent);
    expect(items).toEqual(['note (run:before_tool): looks fine', 'slow (run:before_tool): failed and was skipped (fail-open): hook_timeout — did not answer']);
  });

  it('shows nothing for a call no hook spoke about', () => {
    act(() => root.render(<HookNotes r={call({})} />));
    expect(host.innerHTML).toBe('');
  });
});

describe('on_failure column', () => {
  const b = (event: string, on_failure?: 'open' | 'closed'): HookBinding => ({
    hook_id: 'h',
    event,
    plugin_id: 'p',
    enabled: true,
    on_failure,
    operator: {},
    created_at_unix_ms: 0,
    updated_at_unix_ms: 0,
  });
  it('gives the phase default when the binding sets none', () => {
    expect(onFailureOf(b('run:before_tool'))).toBe('closed (default)');
    expect(onFailureOf(b('run:after_run'))).toBe('open (default)');
    expect(onFailureOf(b('run:before_tool', 'open'))).toBe('open');
    expect(onFailureOf(b('skill:enabled'))).toBe('—');
  });
});
