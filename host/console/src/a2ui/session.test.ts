import { describe, expect, it } from 'vitest';
import { PatchError } from './patch';
import { nextShown, shownFromReply, updateOf, type Shown } from './session';

const reportDoc = {
  v: 1,
  surface: 'report',
  components: [
    { id: 'table', type: 'table', props: { columns: ['Label', 'Value'], rows: [['a', 1]] } },
    { id: 'chart', type: 'chart', props: { title: 'T', kind: 'bar', series: [{ label: 'a', value: 1 }] } },
  ],
};

function current(): Shown {
  const s = shownFromReply({ output: reportDoc, a2ui: { document_id: 'D1', surface: 'report' } });
  if (!s) throw new Error('no document');
  return s;
}

const patch = {
  v: 1,
  ops: [
    { op: 'add', path: '/components/0/props/rows/-', value: ['b', 2] },
    { op: 'add', path: '/components/1/props/series/-', value: { label: 'b', value: 2 } },
    { op: 'replace', path: '/components/1/props/kind', value: 'pie' },
  ],
};

describe('A2UI session', () => {
  it('a reply without a2ui is not a document', () => {
    expect(shownFromReply({ output: { v: 1, surface: 's', components: [] } })).toBeNull();
    expect(shownFromReply({ output: { echo: 'x' }, a2ui: { document_id: 'D', surface: 's' } })).toBeNull();
  });

  it('applies an update (a2ui.patch) to the shown document', () => {
    const next = nextShown(current(), { output: { a2ui_update: { surface: 'report', patch } }, a2ui: { document_id: 'D1', surface: 'report', patch } });
    expect(next?.documentId).toBe('D1');
    const [table, chart] = next!.doc.components;
    expect(table.type === 'table' && table.props.rows).toEqual([['a', '1'], ['b', '2']]);
    expect(chart.type === 'chart' && [chart.props.kind, chart.props.series.length]).toEqual(['pie', 2]);
  });

  it('reads the update from the output too, with patch_json', () => {
    const u = updateOf({ output: { a2ui_update: { surface: 'report', patch_json: JSON.stringify(patch) } } });
    expect(u).toEqual({ surface: 'report', patch });
    const next = nextShown(current(), { output: { a2ui_update: { surface: 'report', patch } } });
    expect(next?.doc.components[0].type).toBe('table');
  });

  it('replaces the document when the reply is a new one', () => {
    const doc2 = { v: 1, surface: 'report', components: [{ id: 'done', type: 'text', props: { value: 'Thanks' } }] };
    const next = nextShown(current(), { output: doc2, a2ui: { document_id: 'D2', surface: 'report' } });
    expect(next?.documentId).toBe('D2');
    expect(next?.doc.components).toEqual([{ id: 'done', type: 'text', props: { value: 'Thanks', tone: 'normal' } }]);
  });

  it('keeps the document for a plain reply', () => {
    expect(nextShown(current(), { output: { ok: true } })).toBeNull();
  });

  it('refuses an update that does not apply, or for another surface', () => {
    const bad = { v: 1, ops: [{ op: 'replace', path: '/components/9', value: {} }] };
    expect(() => nextShown(current(), { output: { a2ui_update: { surface: 'report', patch: bad } } })).toThrow(PatchError);
    expect(() => nextShown(current(), { output: { a2ui_update: { surface: 'other', patch } } })).toThrow('surface');
    const c = current();
    expect(c.doc.components[0].type === 'table' && c.doc.components[0].props.rows).toHaveLength(1);
  });
});
