import {
  LIMITS,
  type ChartKind,
  type ChartPoint,
  type Component,
  type Document,
  type FieldType,
  type FormField,
  type SelectOption,
  type Tone,
} from './types';

// normalizeDocument follows Palyra's web normalizeA2uiDocument (facts §9.1):
// strings are trimmed and clamped (with …), lists cut, ids sanitized and
// deduplicated, defaults filled in. It differs in one way, on purpose: a
// component of an unknown type is kept as an `unknown` placeholder so the
// operator sees that something was not shown. It never throws.

export type NormalizeResult = { ok: true; doc: Document } | { ok: false; error: string };

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Trims s and clamps it to max UTF-16 code units, the last being "…". */
export function clamp(s: string, max: number): string {
  const t = s.trim();
  if (t.length <= max) return t;
  return t.slice(0, Math.max(0, max - 1)) + '…';
}

function str(v: unknown, max: number, fallback = ''): string {
  if (typeof v !== 'string') return fallback;
  const s = clamp(v, max);
  return s === '' ? fallback : s;
}

/** Shows a free-form value: strings as they are, others JSON-encoded. */
export function display(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return String(v);
  }
}

/**
 * Sanitizes an id: characters outside [A-Za-z0-9:_-] become "-", runs of
 * "-" collapse, at most max; "" when nothing is left.
 */
export function sanitizeId(v: unknown, max: number): string {
  if (typeof v !== 'string') return '';
  const s = v.trim().replace(/[^A-Za-z0-9:_-]+/g, '-').replace(/-{2,}/g, '-');
  return s.slice(0, max);
}

/** Makes id unique among seen by appending -2, -3, …; records it. */
export function dedupe(id: string, seen: Set<string>, max: number): string {
  let out = id;
  for (let n = 2; seen.has(out); n++) {
    const suffix = `-${n}`;
    out = id.slice(0, max - suffix.length) + suffix;
  }
  seen.add(out);
  return out;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function clampNum(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

const TONES: Tone[] = ['normal', 'muted', 'success', 'critical'];
const FIELD_TYPES: FieldType[] = ['text', 'email', 'number', 'select', 'checkbox'];
const CHART_KINDS: ChartKind[] = ['bar', 'line', 'pie'];
const KNOWN = ['text', 'markdown', 'list', 'table', 'form', 'chart'];

export function normalizeDocument(input: unknown): NormalizeResult {
  if (!isObj(input)) return { ok: false, error: 'the document is not a JSON object' };
  if (input.v !== 1) return { ok: false, error: 'the document version "v" is not 1' };
  const surface = str(input.surface, LIMITS.surface);
  if (surface === '') return { ok: false, error: 'the document has no surface' };
  const raw = Array.isArray(input.components) ? input.components.slice(0, LIMITS.components) : [];
  const seen = new Set<string>();
  const components: Component[] = [];
  raw.forEach((entry, i) => {
    if (!isObj(entry)) return;
    const id = dedupe(sanitizeId(entry.id, LIMITS.componentId) || `component-${i + 1}`, seen, LIMITS.componentId);
    const props = isObj(entry.props) ? entry.props : {};
    const type = typeof entry.type === 'string' ? entry.type.trim() : '';
    components.push(KNOWN.includes(type) ? component(id, type, props) : unknown(id, type));
  });
  return { ok: true, doc: { v: 1, surface, components } };
}

function unknown(id: string, type: string): Component {
  return { id, type: 'unknown', props: { originalType: clamp(type, 64) || '(none)' } };
}

function component(id: string, type: string, p: Obj): Component {
  switch (type) {
    case 'text': {
      const tone = TONES.includes(p.tone as Tone) ? (p.tone as Tone) : 'normal';
      return { id, type, props: { value: str(p.value, LIMITS.string), tone } };
    }
    case 'markdown':
      return { id, type, props: { value: str(p.value ?? p.markdown, LIMITS.markdown) } };
    case 'list': {
      const items = Array.isArray(p.items) ? p.items.slice(0, LIMITS.listItems) : [];
      return { id, type, props: { ordered: p.ordered === true, items: items.map((it) => clamp(display(it), LIMITS.string)) } };
    }
    case 'table': {
      let columns = (Array.isArray(p.columns) ? p.columns : [])
        .slice(0, LIMITS.tableColumns)
        .map((c) => clamp(display(c), LIMITS.string));
      if (columns.length === 0) columns = ['Value'];
      const rows = (Array.isArray(p.rows) ? p.rows : []).slice(0, LIMITS.tableRows).map((r) => {
        const cells = Array.isArray(r) ? r : [r];
        return columns.map((_, j) => (j < cells.length ? clamp(display(cells[j]), LIMITS.string) : ''));
      });
      return { id, type, props: { columns, rows } };
    }
    case 'form':
      return {
        id,
        type,
        props: {
          title: str(p.title, LIMITS.string, 'Form'),
          submitLabel: str(p.submit_label ?? p.submitLabel, LIMITS.submitLabel, 'Submit'),
          fields: fields(p.fields),
        },
      };
    case 'chart': {
      const kind = CHART_KINDS.includes(p.kind as ChartKind) ? (p.kind as ChartKind) : 'bar';
      const series: ChartPoint[] = (Array.isArray(p.series) ? p.series : [])
        .slice(0, LIMITS.chartPoints)
        .map((pt, i) => {
          const o = isObj(pt) ? pt : {};
          return {
            label: str(o.label, LIMITS.string, `Point ${i + 1}`),
            value: clampNum(num(o.value) ?? 0, 0, LIMITS.chartValue),
          };
        });
      return { id, type, props: { title: str(p.title, LIMITS.string, 'Chart'), kind, series } };
    }
  }
  return unknown(id, type);
}

function fields(v: unknown): FormField[] {
  const raw = Array.isArray(v) ? v.slice(0, LIMITS.formFields) : [];
  const seen = new Set<string>();
  const out: FormField[] = [];
  raw.forEach((entry, i) => {
    if (!isObj(entry)) return;
    const id = dedupe(sanitizeId(entry.id, LIMITS.fieldId) || `field-${i + 1}`, seen, LIMITS.fieldId);
    const type = FIELD_TYPES.includes(entry.type as FieldType) ? (entry.type as FieldType) : 'text';
    const f: FormField = {
      id,
      type,
      label: str(entry.label, LIMITS.fieldLabel, id),
      hint: str(entry.hint, LIMITS.fieldHint),
      required: entry.required === true,
      default: '',
      placeholder: '',
      min: 0,
      max: 100,
      step: 1,
      options: [],
    };
    switch (type) {
      case 'text':
      case 'email':
        f.placeholder = str(entry.placeholder, LIMITS.placeholder);
        f.default = typeof entry.default === 'string' ? clamp(entry.default, LIMITS.string) : '';
        break;
      case 'number': {
        f.min = clampNum(num(entry.min) ?? 0, -LIMITS.numberRange, LIMITS.numberRange);
        f.max = Math.max(f.min, clampNum(num(entry.max) ?? 100, -LIMITS.numberRange, LIMITS.numberRange));
        f.step = clampNum(num(entry.step) ?? 1, LIMITS.minStep, LIMITS.maxStep);
        const d = num(entry.default);
        f.default = d === undefined ? '' : clampNum(d, f.min, f.max);
        break;
      }
      case 'select': {
        const optSeen = new Set<string>();
        const opts: SelectOption[] = [];
        (Array.isArray(entry.options) ? entry.options : []).slice(0, LIMITS.selectOptions).forEach((o, j) => {
          if (!isObj(o)) return;
          const value = dedupe(sanitizeId(o.value, LIMITS.optionValue) || `option-${j + 1}`, optSeen, LIMITS.optionValue);
          opts.push({ value, label: str(o.label, LIMITS.optionLabel, value) });
        });
        if (opts.length === 0) opts.push({ label: 'N/A', value: 'na' });
        f.options = opts;
        f.default = opts.some((o) => o.value === entry.default) ? (entry.default as string) : opts[0].value;
        break;
      }
      case 'checkbox':
        f.default = entry.default === true;
        break;
    }
    out.push(f);
  });
  return out;
}
