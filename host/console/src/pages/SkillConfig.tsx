import { useState } from 'react';
import { api } from '../api/client';
import type { ConfigEntry, SkillConfig } from '../api/types';
import { Banner, errorBanner, LoadError, useLoad, type BannerState } from '../components/common';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How a config key is edited, from its property schema. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'secret' | 'json';

export interface ConfigField {
  entry: ConfigEntry;
  kind: FieldKind;
  /** The allowed values of an enum. */
  options: unknown[];
  title: string;
  description: string;
}

/**
 * The form's fields, one per declared key, from the schema: a sensitive key
 * is a password input; an enum a select; string, number, integer and boolean
 * inputs of their kind; any other shape is edited as JSON.
 */
export function configFields(cfg: SkillConfig): ConfigField[] {
  const props = isObj(cfg.schema) && isObj(cfg.schema.properties) ? cfg.schema.properties : {};
  return cfg.entries
    .filter((e) => e.declared)
    .map((entry) => {
      const p = isObj(props[entry.key]) ? (props[entry.key] as Obj) : {};
      let kind: FieldKind = 'json';
      const options = Array.isArray(p.enum) ? p.enum : [];
      if (entry.sensitive) kind = 'secret';
      else if (options.length > 0) kind = 'enum';
      else if (p.type === 'string' || p.type === 'number' || p.type === 'integer' || p.type === 'boolean') kind = p.type;
      return {
        entry,
        kind,
        options,
        title: typeof p.title === 'string' ? p.title : entry.key,
        description: typeof p.description === 'string' ? p.description : '',
      };
    });
}

/** The text a field starts with: the value set (never a sensitive one), else empty. */
export function initialText(f: ConfigField): string {
  if (!f.entry.set || f.kind === 'secret') return '';
  const v = f.entry.value;
  if (f.kind === 'string' && typeof v === 'string') return v;
  if (f.kind === 'enum') return JSON.stringify(v);
  if (f.kind === 'json') return JSON.stringify(v, null, 2);
  return v === undefined ? '' : String(v);
}

/**
 * Turns a field's text into the JSON value to set, or an error. An empty
 * secret means "keep the value set".
 */
export function parseField(f: ConfigField, text: string): { value?: unknown; error?: string; skip?: boolean } {
  switch (f.kind) {
    case 'secret':
    case 'string':
      if (f.kind === 'secret' && text === '') return { skip: true };
      return { value: text };
    case 'integer':
    case 'number': {
      const t = text.trim();
      const n = Number(t);
      if (t === '' || !Number.isFinite(n)) return { error: `${f.entry.key}: enter a number` };
      if (f.kind === 'integer' && !Number.isInteger(n)) return { error: `${f.entry.key}: enter a whole number` };
      return { value: n };
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false') return { error: `${f.entry.key}: choose true or false` };
      return { value: text === 'true' };
    case 'enum':
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { error: `${f.entry.key}: choose a value` };
      }
    default:
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { error: `${f.entry.key}: not valid JSON` };
      }
  }
}

/** The values to send: the fields whose text changed (and every non-empty secret). */
export function changedValues(fields: ConfigField[], texts: Record<string, string>): { values: Record<string, unknown>; errors: string[] } {
  const values: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const f of fields) {
    const text = texts[f.entry.key];
    if (text === undefined || (f.kind !== 'secret' && text === initialText(f))) continue;
    const r = parseField(f, text);
    if (r.error) errors.push(r.error);
    else if (!r.skip) values[f.entry.key] = r.value;
  }
  return { values, errors };
}

function Field({ f, text, onChange }: { f: ConfigField; text: string; onChange: (t: string) => void }) {
  const id = `config-${f.entry.key}`;
  const hint = `${id}-hint`;
  const common = { id, 'aria-describedby': hint, 'data-testid': id, required: f.entry.required && !f.entry.set && f.entry.default === undefined };
  let input;
  switch (f.kind) {
    case 'secret':
      input = (
        <input
          {...common}
          type="password"
          autoComplete="new-password"
          value={text}
          placeholder={f.entry.set ? 'set (leave empty to keep)' : 'not set'}
          onChange={(e) => onChange(e.target.value)}
        />
      );
      break;
    case 'boolean':
      input = (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          <option value="">{f.entry.set ? '—' : 'not set'}</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      );
      break;
    case 'enum':
      input = (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          <option value="">not set</option>
          {f.options.map((o) => (
            <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
              {typeof o === 'string' ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
      );
      break;
    case 'integer':
    case 'number':
      input = <input {...common} type="number" step={f.kind === 'integer' ? 1 : 'any'} value={text} onChange={(e) => onChange(e.target.value)} />;
      break;
    case 'string':
      input = <input {...common} type="text" value={text} onChange={(e) => onChange(e.target.value)} />;
      break;
    default:
      input = <textarea {...common} rows={3} value={text} onChange={(e) => onChange(e.target.value)} />;
  }
  const state = f.entry.set ? 'set' : f.entry.default !== undefined ? `not set (default ${JSON.stringify(f.entry.default)})` : 'not set';
  return (
    <div className="field" data-testid={`config-field-${f.entry.key}`} data-kind={f.kind}>
      <label htmlFor={id}>
        {f.title}
        {f.entry.required ? <span aria-hidden="true"> *</span> : null}
        {f.entry.required ? <span className="visually-hidden"> (required)</span> : null} <code className="muted">{f.entry.key}</code>
      </label>
      {input}
      <small id={hint} className="hint" data-testid={`config-state-${f.entry.key}`}>
        {f.entry.sensitive ? 'Sensitive, kept in the vault: ' : ''}
        {state}
        {f.description ? `. ${f.description}` : ''}
        {f.entry.problem ? <span className="field-error"> No longer fits the schema: {f.entry.problem}</span> : null}
      </small>
    </div>
  );
}

/** The Config section of a skill's page: a form generated from its [config] schema. */
export function ConfigSection({ skillId, onChanged }: { skillId: string; onChanged?: () => void }) {
  const { data, error, loading, reload } = useLoad((signal) => api.config(skillId, signal), [skillId]);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [busy, setBusy] = useState(false);
  if (error) return <LoadError error={error} what="the config" />;
  if (!data) return <p className="muted">{loading ? 'Loading…' : ''}</p>;
  const fields = configFields(data);
  const undeclared = data.entries.filter((e) => !e.declared);
  if (fields.length === 0 && undeclared.length === 0) return <p className="muted">This skill declares no config.</p>;
  const text = (f: ConfigField) => texts[f.entry.key] ?? initialText(f);
  const done = (title: string) => {
    setTexts({});
    setBanner({ kind: 'success', title });
    reload();
    onChanged?.();
  };
  const save = async () => {
    const all: Record<string, string> = {};
    for (const f of fields) all[f.entry.key] = text(f);
    const { values, errors } = changedValues(fields, all);
    if (errors.length) {
      setBanner({ kind: 'error', title: 'Fix these values first', message: errors.join('; ') });
      return;
    }
    if (Object.keys(values).length === 0) {
      setBanner({ kind: 'info', title: 'Nothing changed.' });
      return;
    }
    setBusy(true);
    try {
      await api.setConfig(skillId, values);
      done(`Config saved: ${Object.keys(values).sort().join(', ')}.`);
    } catch (e) {
      setBanner(errorBanner('Saving the config failed', e));
    } finally {
      setBusy(false);
    }
  };
  const unset = async (key: string) => {
    setBusy(true);
    try {
      await api.unsetConfig(skillId, [key]);
      done(`Unset ${key}.`);
    } catch (e) {
      setBanner(errorBanner(`Unsetting ${key} failed`, e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      data-testid="config-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      {data.missing.length ? (
        <p className="field-error" data-testid="config-missing">
          Not eligible until set: {data.missing.join(', ')}
        </p>
      ) : null}
      {fields.map((f) => (
        <div key={f.entry.key} className="config-row">
          <Field f={f} text={text(f)} onChange={(t) => setTexts((s) => ({ ...s, [f.entry.key]: t }))} />
          {f.entry.set ? (
            <button type="button" disabled={busy} onClick={() => void unset(f.entry.key)} data-testid={`config-unset-${f.entry.key}`}>
              Unset
            </button>
          ) : null}
        </div>
      ))}
      {undeclared.map((e) => (
        <p key={e.key} className="field-error" data-testid={`config-undeclared-${e.key}`}>
          <code>{e.key}</code> is kept but not declared by this version.{' '}
          <button type="button" disabled={busy} onClick={() => void unset(e.key)}>
            Unset
          </button>
        </p>
      ))}
      <p>
        <button type="submit" className="primary" disabled={busy} data-testid="config-save">
          Save config
        </button>
      </p>
      <Banner banner={banner} onClose={() => setBanner(null)} />
    </form>
  );
}
