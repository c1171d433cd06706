import { describe, expect, it } from 'vitest';
import { applyPatch, parsePointer, PatchError, type PatchErrorCode } from './patch';

const base = () => ({
  v: 1,
  surface: 's',
  components: [
    { id: 'table', type: 'table', props: { columns: ['L', 'V'], rows: [['a', 1]] } },
    { id: 'chart', type: 'chart', props: { kind: 'bar', series: [{ label: 'a', value: 1 }] } },
  ],
  'a/b': 1,
  'm~n': 2,
});

const p = (...ops: unknown[]) => ({ v: 1, ops });

describe('applyPatch: what applies', () => {
  it.each([
    ['add appends with -', p({ op: 'add', path: '/components/0/props/rows/-', value: ['b', 2] }), (d: any) => d.components[0].props.rows, [['a', 1], ['b', 2]]],
    ['add inserts at an index', p({ op: 'add', path: '/components/0/props/rows/0', value: ['z', 0] }), (d: any) => d.components[0].props.rows, [['z', 0], ['a', 1]]],
    ['add at the length', p({ op: 'add', path: '/components/0/props/rows/1', value: ['c', 3] }), (d: any) => d.components[0].props.rows.length, 2],
    ['add sets a new key', p({ op: 'add', path: '/components/1/props/title', value: 'T' }), (d: any) => d.components[1].props.title, 'T'],
    ['add replaces an existing key', p({ op: 'add', path: '/components/1/props/kind', value: 'pie' }), (d: any) => d.components[1].props.kind, 'pie'],
    ['replace a key', p({ op: 'replace', path: '/components/1/props/kind', value: 'line' }), (d: any) => d.components[1].props.kind, 'line'],
    ['replace an element', p({ op: 'replace', path: '/components/0/props/rows/0', value: ['q', 9] }), (d: any) => d.components[0].props.rows, [['q', 9]]],
    ['remove an element', p({ op: 'remove', path: '/components/0' }), (d: any) => d.components.map((c: any) => c.id), ['chart']],
    ['remove a key', p({ op: 'remove', path: '/surface' }), (d: any) => 'surface' in d, false],
    ['~1 is /', p({ op: 'replace', path: '/a~1b', value: 5 }), (d: any) => d['a/b'], 5],
    ['~0 is ~', p({ op: 'replace', path: '/m~0n', value: 6 }), (d: any) => d['m~n'], 6],
    ['root replace', p({ op: 'replace', path: '', value: { v: 1, surface: 'n', components: [] } }), (d: any) => d.surface, 'n'],
    ['root add', p({ op: 'add', path: '', value: [1] }), (d: any) => d, [1]],
    ['null value', p({ op: 'add', path: '/x', value: null }), (d: any) => d.x, null],
    [
      'ops apply in order',
      p({ op: 'add', path: '/components/0/props/rows/-', value: ['b', 2] }, { op: 'replace', path: '/components/0/props/rows/1/1', value: 3 }),
      (d: any) => d.components[0].props.rows[1],
      ['b', 3],
    ],
  ])('%s', (_, patch, get, want) => {
    const d = base();
    const out = applyPatch(d, patch);
    expect(get(out)).toEqual(want);
    expect(d).toEqual(base()); // the input is not changed
  });

  it('does not share values between ops', () => {
    const v = { n: 1 };
    const out = applyPatch({ a: [] }, p({ op: 'add', path: '/a/-', value: v }, { op: 'add', path: '/a/-', value: v }, { op: 'replace', path: '/a/0/n', value: 2 })) as any;
    expect(out.a).toEqual([{ n: 2 }, { n: 1 }]);
    expect(v).toEqual({ n: 1 });
  });

  it('takes 256 ops', () => {
    const ops = Array.from({ length: 256 }, () => ({ op: 'add', path: '/a/-', value: 1 }));
    expect((applyPatch({ a: [] }, p(...ops)) as any).a).toHaveLength(256);
  });
});

describe('applyPatch: what is refused', () => {
  const cases: [string, unknown, PatchErrorCode, string][] = [
    ['not an object', [], 'invalid_patch', 'not an object'],
    ['v 2', { v: 2, ops: [{ op: 'remove', path: '/x' }] }, 'invalid_patch', '/v'],
    ['unknown key', { v: 1, ops: [{ op: 'add', path: '/x', value: 1 }], x: 1 }, 'invalid_patch', '/x'],
    ['no ops', p(), 'invalid_patch', 'no ops'],
    ['ops not an array', { v: 1, ops: {} }, 'invalid_patch', '/ops'],
    ['257 ops', p(...Array.from({ length: 257 }, () => ({ op: 'add', path: '/a/-', value: 1 }))), 'budget_exceeded', 'over the limit of 256'],
    ['unknown op', p({ op: 'move', path: '/a', value: 1 }), 'invalid_patch', 'unknown op'],
    ['op key unknown', p({ op: 'add', path: '/a', value: 1, from: '/b' }), 'invalid_patch', '/ops/0/from'],
    ['add without value', p({ op: 'add', path: '/a' }), 'invalid_patch', 'takes a value'],
    ['replace without value', p({ op: 'replace', path: '/a' }), 'invalid_patch', 'takes a value'],
    ['remove with value', p({ op: 'remove', path: '/a', value: 1 }), 'invalid_patch', 'takes no value'],
    ['remove root', p({ op: 'remove', path: '' }), 'invalid_patch', 'remove of the root'],
    ['path without /', p({ op: 'add', path: 'a', value: 1 }), 'invalid_patch', 'does not start with /'],
    ['path not a string', p({ op: 'add', path: 1, value: 1 }), 'invalid_patch', '/ops/0/path'],
    ['bad escape', p({ op: 'add', path: '/a~2', value: 1 }), 'invalid_patch', '~0 or ~1'],
    ['trailing ~', p({ op: 'add', path: '/a~', value: 1 }), 'invalid_patch', '~0 or ~1'],
    ['__proto__', p({ op: 'add', path: '/__proto__/x', value: 1 }), 'invalid_patch', 'forbidden token'],
    ['prototype', p({ op: 'add', path: '/a/prototype', value: 1 }), 'invalid_patch', 'forbidden token'],
    ['constructor', p({ op: 'replace', path: '/constructor', value: 1 }), 'invalid_patch', 'forbidden token'],
    ['escaped __proto__', p({ op: 'add', path: '/__proto__', value: {} }), 'invalid_patch', 'forbidden token'],
    ['path over 512', p({ op: 'add', path: '/' + 'a'.repeat(512), value: 1 }), 'budget_exceeded', 'over the limit of 512'],
    ['missing parent', p({ op: 'add', path: '/nope/x', value: 1 }), 'conflict', 'no key'],
    ['replace missing key', p({ op: 'replace', path: '/nope', value: 1 }), 'conflict', 'no key'],
    ['remove missing key', p({ op: 'remove', path: '/nope' }), 'conflict', 'no key'],
    ['index beyond length', p({ op: 'add', path: '/components/3', value: 1 }), 'conflict', 'beyond the length'],
    ['replace at length', p({ op: 'replace', path: '/components/2', value: 1 }), 'conflict', 'no index 2'],
    ['leading zero', p({ op: 'replace', path: '/components/01', value: 1 }), 'conflict', 'canonical'],
    ['signed index', p({ op: 'add', path: '/components/+1', value: 1 }), 'conflict', 'canonical'],
    ['- for replace', p({ op: 'replace', path: '/components/-', value: 1 }), 'conflict', 'canonical'],
    ['- for remove', p({ op: 'remove', path: '/components/-' }), 'conflict', 'canonical'],
    ['through a scalar', p({ op: 'add', path: '/v/x', value: 1 }), 'conflict', 'not an object or array'],
    ['through a string', p({ op: 'add', path: '/surface/x/y', value: 1 }), 'conflict', 'no members'],
  ];
  it.each(cases)('%s', (_, patch, code, msg) => {
    const d = base();
    let err: unknown;
    try {
      applyPatch(d, patch);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatchError);
    expect((err as PatchError).code).toBe(code);
    expect((err as PatchError).message).toContain(msg);
    expect(d).toEqual(base());
  });

  it('leaves the document as it was when a later op fails', () => {
    const d = base();
    expect(() => applyPatch(d, p({ op: 'add', path: '/components/-', value: {} }, { op: 'remove', path: '/nope' }))).toThrow(PatchError);
    expect(d.components).toHaveLength(2);
  });

  it('never pollutes Object.prototype', () => {
    expect(() => applyPatch({}, p({ op: 'add', path: '/__proto__/polluted', value: true }))).toThrow(PatchError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parsePointer', () => {
  it.each([
    ['', []],
    ['/', ['']],
    ['/a/b', ['a', 'b']],
    ['/a~1b/c~0d', ['a/b', 'c~d']],
    ['/~01', ['~1']],
  ])('%s', (ptr, want) => {
    expect(parsePointer(ptr)).toEqual(want);
  });
});
