import { describe, expect, it } from 'vitest';
import { clamp, dedupe, normalizeDocument, sanitizeId } from './normalize';
import type { Component, Document } from './types';

function doc(components: unknown[], extra: Record<string, unknown> = {}): Document {
  const r = normalizeDocument({ v: 1, surface: 's', components, ...extra });
  if (!r.ok) throw new Error(r.error);
  return r.doc;
}

function one(c: unknown): Component {
  return doc([c]).components[0];
}

describe('normalizeDocument: the document', () => {
  it.each([
    ['not an object', [], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
    ['v missing', { surface: 's', components: [] }, 'not 1'],
    ['v 2', { v: 2, surface: 's', components: [] }, 'not 1'],
    ['v "1"', { v: '1', surface: 's', components: [] }, 'not 1'],
    ['blank surface', { v: 1, surface: '   ', components: [] }, 'no surface'],
    ['surface not a string', { v: 1, surface: 3, components: [] }, 'no surface'],
  ])('refuses %s', (_, input, msg) => {
    const r = normalizeDocument(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(msg);
  });

  it('trims and clamps the surface to 128 with an ellipsis', () => {
    const d = normalizeDocument({ v: 1, surface: '  ' + 'x'.repeat(200) + ' ', components: [] });
    expect(d.ok && d.doc.surface.length).toBe(128);
    expect(d.ok && d.doc.surface.endsWith('…')).toBe(true);
  });

  it('accepts an empty or missing components list', () => {
    expect(doc([]).components).toEqual([]);
    const r = normalizeDocument({ v: 1, surface: 's' });
    expect(r.ok && r.doc.components).toEqual([]);
  });

  it('cuts components to 128', () => {
    const cs = Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, type: 'text', props: { value: 'x' } }));
    expect(doc(cs).components).toHaveLength(128);
  });

  it('drops entries that are not objects and keeps unknown types as placeholders', () => {
    const d = doc([42, 'text', null, { id: 'a', type: 'video', props: {} }, { id: 'b', props: {} }]);
    expect(d.components).toEqual([
      { id: 'a', type: 'unknown', props: { originalType: 'video' } },
      { id: 'b', type: 'unknown', props: { originalType: '(none)' } },
    ]);
  });
});

describe('ids', () => {
  it.each([
    ['plain', 'abc:D_e-9', 'abc:D_e-9'],
    ['spaces and dots', 'a b.c', 'a-b-c'],
    ['runs collapse', 'a!!  ??b', 'a-b'],
    ['dash runs collapse', 'a---b', 'a-b'],
    ['unicode', 'größe', 'gr-e'],
    ['not a string', 7, ''],
  ])('sanitizeId %s', (_, input, want) => {
    expect(sanitizeId(input, 64)).toBe(want);
  });

  it('cuts ids to the limit', () => {
    expect(sanitizeId('x'.repeat(100), 64)).toHaveLength(64);
  });

  it('dedupes with -2, -3 within the limit', () => {
    const seen = new Set<string>();
    expect([dedupe('a', seen, 64), dedupe('a', seen, 64), dedupe('a', seen, 64)]).toEqual(['a', 'a-2', 'a-3']);
    const long = 'y'.repeat(64);
    expect(dedupe(long, seen, 64)).toBe(long);
    expect(dedupe(long, seen, 64)).toBe('y'.repeat(62) + '-2');
  });

  it('gives missing ids component-<n> and renames duplicates', () => {
    const d = doc([
      { type: 'text', props: {} },
      { id: 'x', type: 'text', props: {} },
      { id: 'x', type: 'text', props: {} },
      { id: '***', type: 'text', props: {} },
    ]);
    expect(d.components.map((c) => c.id)).toEqual(['component-1', 'x', 'x-2', '-']);
  });
});

describe('component props', () => {
  it.each([
    ['text tone', { type: 'text', props: { value: ' hi ', tone: 'critical' } }, { value: 'hi', tone: 'critical' }],
    ['text bad tone', { type: 'text', props: { value: 'hi', tone: 'loud' } }, { value: 'hi', tone: 'normal' }],
    ['text no value', { type: 'text', props: {} }, { value: '', tone: 'normal' }],
    ['markdown alias', { type: 'markdown', props: { markdown: '# T' } }, { value: '# T' }],
    ['list of mixed', { type: 'list', props: { ordered: true, items: ['a', 1, { b: 2 }, null] } }, { ordered: true, items: ['a', '1', '{"b":2}', 'null'] }],
    ['list ordered not bool', { type: 'list', props: { ordered: 'yes', items: [] } }, { ordered: false, items: [] }],
    ['table pads and cuts', { type: 'table', props: { columns: ['A', 'B'], rows: [['1'], ['1', '2', '3'], [true, 2.5]] } }, { columns: ['A', 'B'], rows: [['1', ''], ['1', '2'], ['true', '2.5']] }],
    ['table default column', { type: 'table', props: { rows: [['x', 'y']] } }, { columns: ['Value'], rows: [['x']] }],
    ['chart defaults', { type: 'chart', props: {} }, { title: 'Chart', kind: 'bar', series: [] }],
    [
      'chart clamps values',
      { type: 'chart', props: { title: 'T', kind: 'pie', series: [{ label: 'a', value: -5 }, { label: 'b', value: 2e6 }, { value: 'x' }, { label: 'd', value: 3 }] } },
      { title: 'T', kind: 'pie', series: [{ label: 'a', value: 0 }, { label: 'b', value: 1_000_000 }, { label: 'Point 3', value: 0 }, { label: 'd', value: 3 }] },
    ],
    ['chart unknown kind', { type: 'chart', props: { kind: 'radar' } }, { title: 'Chart', kind: 'bar', series: [] }],
  ])('%s', (_, input, props) => {
    expect(one({ id: 'c', ...input }).props).toEqual(props);
  });

  it('clamps strings to 512 and markdown to 12000', () => {
    const t = one({ id: 't', type: 'text', props: { value: 'a'.repeat(600) } });
    expect(t.type === 'text' && t.props.value.length).toBe(512);
    const m = one({ id: 'm', type: 'markdown', props: { value: 'a'.repeat(13000) } });
    expect(m.type === 'markdown' && m.props.value.length).toBe(12000);
  });

  it('cuts lists, tables and charts to their limits', () => {
    const l = one({ id: 'l', type: 'list', props: { items: Array(300).fill('x') } });
    expect(l.type === 'list' && l.props.items.length).toBe(256);
    const t = one({ id: 't', type: 'table', props: { columns: Array(20).fill('c'), rows: Array(300).fill([]) } });
    expect(t.type === 'table' && [t.props.columns.length, t.props.rows.length]).toEqual([16, 256]);
    const c = one({ id: 'c', type: 'chart', props: { series: Array(70).fill({ label: 'p', value: 1 }) } });
    expect(c.type === 'chart' && c.props.series.length).toBe(64);
  });
});

describe('form fields', () => {
  const form = (fields: unknown[], extra: Record<string, unknown> = {}) => {
    const c = one({ id: 'f', type: 'form', props: { fields, ...extra } });
    if (c.type !== 'form') throw new Error('not a form');
    return c.props;
  };

  it('fills title and submit label, with the submitLabel alias', () => {
    expect(form([])).toMatchObject({ title: 'Form', submitLabel: 'Submit' });
    expect(form([], { title: 'Add', submitLabel: 'Go' })).toMatchObject({ title: 'Add', submitLabel: 'Go' });
    expect(form([], { submit_label: 'x'.repeat(60) }).submitLabel).toHaveLength(48);
  });

  it('normalizes each field type', () => {
    const p = form([
      { id: 'name', type: 'text', label: 'Name', placeholder: 'p'.repeat(100), default: 'Ann', required: true, hint: 'h' },
      { id: 'mail', type: 'email' },
      { id: 'n', type: 'number', min: 5, max: 2, step: 0, default: 99 },
      { id: 'n2', type: 'number', min: -2e6, max: 2e6, step: 1e9 },
      { id: 'k', type: 'select', options: [{ label: 'Bar', value: 'bar' }, { label: 'Pie', value: 'pie' }], default: 'pie' },
      { id: 'k2', type: 'select', options: [], default: 'x' },
      { id: 'k3', type: 'select', options: [{ label: 'A', value: 'a b' }], default: 'zzz' },
      { id: 'c', type: 'checkbox', default: 'yes' },
      { id: 'd', type: 'date' },
      { type: 'text' },
      { id: 'name', type: 'text' },
    ]);
    const f = Object.fromEntries(p.fields.map((x) => [x.id, x]));
    expect(f.name).toMatchObject({ label: 'Name', required: true, default: 'Ann', hint: 'h' });
    expect(f.name.placeholder).toHaveLength(96);
    expect(f.mail).toMatchObject({ type: 'email', label: 'mail', default: '', required: false });
    expect(f.n).toMatchObject({ min: 5, max: 5, step: 1e-6, default: 5 });
    expect(f.n2).toMatchObject({ min: -1e6, max: 1e6, step: 1e5, default: '' });
    expect(f.k).toMatchObject({ default: 'pie', options: [{ label: 'Bar', value: 'bar' }, { label: 'Pie', value: 'pie' }] });
    expect(f.k2).toMatchObject({ default: 'na', options: [{ label: 'N/A', value: 'na' }] });
    expect(f.k3).toMatchObject({ default: 'a-b', options: [{ label: 'A', value: 'a-b' }] });
    expect(f.c.default).toBe(false);
    expect(f.d.type).toBe('text');
    expect(p.fields.map((x) => x.id)).toEqual(['name', 'mail', 'n', 'n2', 'k', 'k2', 'k3', 'c', 'd', 'field-10', 'name-2']);
  });

  it('cuts fields to 32 and options to 64', () => {
    expect(form(Array.from({ length: 40 }, (_, i) => ({ id: `f${i}`, type: 'text' }))).fields).toHaveLength(32);
    const opts = Array.from({ length: 70 }, (_, i) => ({ label: `o${i}`, value: `o${i}` }));
    expect(form([{ id: 's', type: 'select', options: opts }]).fields[0].options).toHaveLength(64);
  });
});

describe('clamp', () => {
  it('leaves short strings and trims', () => {
    expect(clamp('  ab ', 5)).toBe('ab');
    expect(clamp('abcdef', 4)).toBe('abc…');
  });
});
