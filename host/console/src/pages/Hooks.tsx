import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { HookBinding } from '../api/types';
import { Badge, Banner, ConfirmDialog, errorBanner, LoadError, time, useLoad, type BannerState } from '../components/common';

/** The events a hook can bind to (host/hooks knownEvents). */
export const HOOK_EVENTS = [
  'gateway:startup',
  'skill:installed',
  'skill:updated',
  'skill:enabled',
  'skill:disabled',
  'skill:quarantined',
  'skill:removed',
  'skill:crashlooping',
  'run:before_run',
  'run:before_tool',
  'run:after_tool',
  'run:before_delivery',
  'run:after_run',
];

const ID_RE = /^[a-z0-9._-]{1,128}$/;

/** What a run hook's failure does to the call (host/hooks DefaultOnFailure when the binding sets none). */
export function onFailureOf(b: HookBinding): string {
  if (!b.event.startsWith('run:')) return '—';
  if (b.on_failure) return b.on_failure;
  return b.event.startsWith('run:before_') ? 'closed (default)' : 'open (default)';
}

type Pending = { kind: 'enable' | 'disable' | 'remove'; b: HookBinding };

export function HooksPage() {
  const hooks = useLoad(() => api.hooks(), []);
  const skills = useLoad((s) => api.skills({ current_only: true }, s), []);
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [form, setForm] = useState({ hook_id: '', event: 'skill:quarantined', plugin_id: '', tool_id: '', on_failure: '', enabled: true, display_name: '', notes: '' });
  const [errs, setErrs] = useState<Record<string, string>>({});

  const bindings = hooks.data?.bindings ?? [];
  const plugins = skills.data?.entries ?? [];

  const bind = async (e: FormEvent) => {
    e.preventDefault();
    const x: Record<string, string> = {};
    if (!ID_RE.test(form.hook_id)) x.hook_id = 'Lower-case letters, digits, ".", "_" and "-", 1 to 128.';
    if (!ID_RE.test(form.plugin_id)) x.plugin_id = 'Choose the skill that handles the hook.';
    if (form.tool_id && !/^[a-z0-9._:-]{1,128}$/.test(form.tool_id)) x.tool_id = 'Lower-case letters, digits, ".", "_", ":" and "-".';
    setErrs(x);
    if (Object.keys(x).length) return;
    try {
      const out = await api.bindHook({
        hook_id: form.hook_id,
        event: form.event,
        plugin_id: form.plugin_id,
        tool_id: form.tool_id || undefined,
        on_failure: form.event.startsWith('run:') && form.on_failure ? (form.on_failure as 'open' | 'closed') : undefined,
        enabled: form.enabled,
        operator: { display_name: form.display_name || undefined, notes: form.notes || undefined },
      });
      setBanner({ kind: 'success', title: `Bound hook ${out.hook_id} to ${out.event}.`, details: out });
      setForm({ ...form, hook_id: '', display_name: '', notes: '' });
      hooks.reload();
    } catch (err) {
      setBanner(errorBanner('Binding the hook failed', err));
    }
  };

  const act = async (p: Pending) => {
    try {
      if (p.kind === 'remove') await api.removeHook(p.b.hook_id);
      else await api.setHookEnabled(p.b.hook_id, p.kind === 'enable');
      setBanner({ kind: 'success', title: `Hook ${p.b.hook_id}: ${p.kind === 'remove' ? 'removed' : p.kind + 'd'}.` });
    } catch (err) {
      setBanner(errorBanner(`Could not ${p.kind} hook ${p.b.hook_id}`, err));
    }
    setPending(null);
    hooks.reload();
  };

  const field = (k: 'hook_id' | 'tool_id' | 'display_name' | 'notes', label: string, hint?: string) => (
    <div className="field">
      <label htmlFor={`h-${k}`}>{label}</label>
      <input
        id={`h-${k}`}
        value={form[k]}
        onChange={(e) => setForm({ ...form, [k]: e.target.value })}
        aria-invalid={errs[k] ? true : undefined}
        aria-describedby={[hint ? `h-${k}-hint` : '', errs[k] ? `h-${k}-err` : ''].filter(Boolean).join(' ') || undefined}
        data-testid={`hook-${k}`}
      />
      {hint ? (
        <small id={`h-${k}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {errs[k] ? (
        <small id={`h-${k}-err`} className="field-error">
          {errs[k]}
        </small>
      ) : null}
    </div>
  );

  return (
    <>
      <h1>Hook bindings</h1>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      {hooks.error ? <LoadError error={hooks.error} what="the hooks" /> : null}
      <div className="table-wrap" tabIndex={0}>
        <table className="data" data-testid="hooks-table">
          <caption>{hooks.loading ? 'Loading…' : `${bindings.length} binding${bindings.length === 1 ? '' : 's'}`}</caption>
          <thead>
            <tr>
              <th scope="col">Hook</th>
              <th scope="col">Event</th>
              <th scope="col">Skill</th>
              <th scope="col">Tool</th>
              <th scope="col">State</th>
              <th scope="col">On failure</th>
              <th scope="col">Owner</th>
              <th scope="col">Updated</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {bindings.map((b) => (
              <tr key={b.hook_id} data-testid="hook-row" data-hook-id={b.hook_id}>
                <th scope="row">
                  <code>{b.hook_id}</code>
                  {b.operator.display_name ? <div className="muted">{b.operator.display_name}</div> : null}
                </th>
                <td>{b.event}</td>
                <td>{b.plugin_id}</td>
                <td>{b.tool_id || <span className="muted">default</span>}</td>
                <td>
                  <Badge value={b.enabled ? 'enabled' : 'disabled'} />
                </td>
                <td data-testid="hook-on-failure">{onFailureOf(b)}</td>
                <td>{b.operator.owner_principal || '—'}</td>
                <td>{time(b.updated_at_unix_ms)}</td>
                <td className="actions">
                  <button type="button" className="secondary small" onClick={() => setPending({ kind: b.enabled ? 'disable' : 'enable', b })} data-testid={`hook-toggle-${b.hook_id}`}>
                    {b.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button type="button" className="danger-outline small" onClick={() => setPending({ kind: 'remove', b })} data-testid={`hook-remove-${b.hook_id}`}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form className="card" onSubmit={bind} noValidate aria-labelledby="bind-h" data-testid="bind-form">
        <h2 id="bind-h">Bind a hook</h2>
        {field('hook_id', 'Hook id', 'Names the binding, e.g. audit-log.quarantined.')}
        <div className="field">
          <label htmlFor="h-event">Event</label>
          <select id="h-event" value={form.event} onChange={(e) => setForm({ ...form, event: e.target.value })} data-testid="hook-event">
            {HOOK_EVENTS.map((e) => (
              <option key={e}>{e}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="h-plugin">Skill</label>
          <select
            id="h-plugin"
            value={form.plugin_id}
            onChange={(e) => setForm({ ...form, plugin_id: e.target.value })}
            aria-invalid={errs.plugin_id ? true : undefined}
            aria-describedby={errs.plugin_id ? 'h-plugin-err' : undefined}
            data-testid="hook-plugin"
          >
            <option value="">(choose)</option>
            {plugins.map((p) => (
              <option key={p.skill_id} value={p.skill_id}>
                {p.skill_id}
              </option>
            ))}
          </select>
          {errs.plugin_id ? (
            <small id="h-plugin-err" className="field-error">
              {errs.plugin_id}
            </small>
          ) : null}
        </div>
        {field('tool_id', 'Tool id (optional)', 'Empty: the skill’s default tool.')}
        {form.event.startsWith('run:') ? (
          <div className="field">
            <label htmlFor="h-on-failure">When the hook fails or times out</label>
            <select
              id="h-on-failure"
              value={form.on_failure}
              onChange={(e) => setForm({ ...form, on_failure: e.target.value })}
              aria-describedby="h-on-failure-hint"
              data-testid="hook-on-failure-select"
            >
              <option value="">Default ({form.event.startsWith('run:before_') ? 'fail the call' : 'let the call go on'})</option>
              <option value="closed">Fail the call (closed)</option>
              <option value="open">Let the call go on (open)</option>
            </select>
            <small id="h-on-failure-hint" className="hint">
              A run hook that errs or times out fails the call when closed; when open the call goes on and the failure is shown as an annotation.
            </small>
          </div>
        ) : null}
        {field('display_name', 'Display name (optional)')}
        {field('notes', 'Notes (optional)')}
        <div className="field field-checkbox">
          <label className="check" htmlFor="h-enabled">
            <input id="h-enabled" type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.target.checked })} /> Enabled
          </label>
        </div>
        <button type="submit" data-testid="hook-bind">
          Bind
        </button>
      </form>
      {pending ? (
        <ConfirmDialog
          title={`${pending.kind === 'remove' ? 'Remove' : pending.kind === 'enable' ? 'Enable' : 'Disable'} hook ${pending.b.hook_id}?`}
          confirmLabel={pending.kind === 'remove' ? 'Remove' : pending.kind === 'enable' ? 'Enable' : 'Disable'}
          danger={pending.kind !== 'enable'}
          onClose={() => setPending(null)}
          onConfirm={() => act(pending)}
        >
          <p>
            {pending.b.event} → {pending.b.plugin_id}
            {pending.b.tool_id ? ` / ${pending.b.tool_id}` : ''}
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
