import { describe, expect, it } from 'vitest';
import { checkInput } from './check';
import { buildModel, collect, initialState, stateFromValue, withPropertyOrder, type InputError, type Node, type State } from './model';
import { validateSchema } from './validate';

// The input schemas of the example skills (as the API serves them).
const echo = { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', maxLength: 65536 } } };
const counter = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { by: { type: 'integer', minimum: -1000000, maximum: 1000000 }, name: { type: 'string', pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$' } },
};
const row = { type: 'object', required: ['label', 'value'], additionalProperties: false, properties: { label: { type: 'string', maxLength: 512 }, value: { type: 'number', minimum: 0, maximum: 1000000 } } };
const reportInput = { type: 'object', required: ['title', 'rows'], additionalProperties: false, properties: { rows: { type: 'array', maxItems: 64, items: row }, title: { type: 'string', minLength: 1, maxLength: 512 } } };
const report = {
  type: 'object',
  oneOf: [
    { title: 'Report', ...reportInput },
    { title: 'Form submit', type: 'object', required: ['a2ui_submit'], additionalProperties: false, properties: { a2ui_submit: { type: 'object' } } },
  ],
};

function kinds(n: Node): unknown {
  switch (n.kind) {
    case 'object':
      return Object.fromEntries(n.props.map((p) => [p.name + (p.required ? '*' : ''), kinds(p.node)]));
    case 'array':
      return [kinds(n.items)];
    case 'choice':
      return { [n.mode]: n.branches.map((b) => [b.label, kinds(b.node)]) };
    case 'string':
      return n.enum ? `enum(${n.enum.join('|')})` : n.format ? `string:${n.format}` : 'string';
    case 'number':
      return n.integer ? 'integer' : 'number';
    case 'raw':
      return `raw(${n.reason})`;
    default:
      return n.kind;
  }
}

describe('buildModel: schema to form', () => {
  it.each([
    ['echo', echo, { 'text*': 'string' }],
    ['kv counter', counter, { by: 'integer', 'name*': 'string' }],
    ['report: array of objects', reportInput, { 'rows*': [{ 'label*': 'string', 'value*': 'number' }], 'title*': 'string' }],
    [
      'report with oneOf',
      report,
      { oneOf: [['Report', { 'rows*': [{ 'label*': 'string', 'value*': 'number' }], 'title*': 'string' }], ['Form submit', { 'a2ui_submit*': 'raw(an object without listed properties)' }]] },
    ],
    ['nested object', { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'boolean' } } } } }, { a: { b: 'boolean' } }],
    ['enum', { type: 'object', properties: { k: { type: 'string', enum: ['bar', 'pie'] } } }, { k: 'enum(bar|pie)' }],
    ['enum without type', { properties: { k: { enum: ['x', 'y'] } } }, { k: 'enum(x|y)' }],
    ['mixed enum is raw', { type: 'object', properties: { k: { enum: ['x', 1] } } }, { k: 'raw(an enum of non-strings)' }],
    ['email', { type: 'object', properties: { m: { type: 'string', format: 'email' } } }, { m: 'string:email' }],
    ['array of strings', { type: 'object', properties: { t: { type: 'array', items: { type: 'string' } } } }, { t: ['string'] }],
    ['array of any is raw', { type: 'object', properties: { t: { type: 'array' } } }, { t: 'raw(an array of any values)' }],
    ['tuple is raw', { type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }] } } }, { t: 'raw(the schema uses prefixItems)' }],
    ['const', { type: 'object', properties: { c: { const: 'x' } } }, { c: 'const' }],
    ['several types is raw', { type: 'object', properties: { c: { type: ['string', 'null'] } } }, { c: 'raw(a value of several types)' }],
    ['anyOf of objects', { anyOf: [{ required: ['a'], properties: { a: { type: 'string' } } }, { properties: { b: { type: 'number' } } }] }, { anyOf: [['a', { 'a*': 'string' }], ['Option 2', { b: 'number' }]] }],
    ['oneOf of scalars is raw', { oneOf: [{ type: 'string' }, { type: 'number' }] }, 'raw(a oneOf that is not a choice of objects)'],
    ['allOf is raw', { allOf: [{ type: 'object' }] }, 'raw(the schema uses allOf)'],
    ['local $ref', { type: 'object', properties: { r: { $ref: '#/$defs/row' } }, $defs: { row } }, { r: { 'label*': 'string', 'value*': 'number' } }],
    ['empty schema is raw', {}, 'raw(a value of any type)'],
    ['true is raw', true, 'raw(any JSON value)'],
    ['closed empty object', { type: 'object', additionalProperties: false }, {}],
  ])('%s', (_, schema, want) => {
    expect(kinds(buildModel(schema))).toEqual(want);
  });

  it('keeps the fields in schema order, nested ones included', () => {
    const n = buildModel({ type: 'object', properties: { a: { type: 'array', items: { type: 'string' } }, b: { type: 'string' }, c: { type: 'object', properties: {} }, d: { type: 'number' } } });
    expect(n.kind === 'object' && n.props.map((p) => p.name)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps the description of every field', () => {
    const n = buildModel({ type: 'object', properties: { text: { type: 'string', description: 'What to echo.' }, n: { type: 'integer', description: 'How often.' } } });
    expect(n.kind === 'object' && n.props.map((p) => [p.name, p.node.description])).toEqual([
      ['text', 'What to echo.'],
      ['n', 'How often.'],
    ]);
  });

  it('orders the fields as the manifest does (input_property_order), nested objects and branches too', () => {
    const schema = {
      type: 'object',
      properties: { alpha: { type: 'string' }, rows: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' }, value: { type: 'number' } } } }, title: { type: 'string' } },
      oneOf: [{ type: 'object', properties: { b: { type: 'string' }, a: { type: 'string' } } }],
    };
    const ordered = withPropertyOrder(schema, { '': ['title', 'rows'], '/properties/rows/items': ['value', 'label'], '/oneOf/0': ['b', 'a'] });
    const top = ordered as { properties: Record<string, { items: { properties: object } }>; oneOf: { properties: object }[] };
    // Names the order leaves out follow in schema order.
    expect(Object.keys(top.properties)).toEqual(['title', 'rows', 'alpha']);
    expect(Object.keys(top.properties.rows.items.properties)).toEqual(['value', 'label']);
    expect(Object.keys(top.oneOf[0].properties)).toEqual(['b', 'a']);
    // The original is not changed.
    expect(Object.keys(schema.properties)).toEqual(['alpha', 'rows', 'title']);
  });

  it.each([
    ['no order', undefined],
    ['an empty order', {}],
  ])('withPropertyOrder with %s returns the schema as it is', (_, order) => {
    const schema = { type: 'object', properties: { b: {}, a: {} } };
    expect(withPropertyOrder(schema, order)).toBe(schema);
  });

  it('withPropertyOrder ignores names the schema does not have and keeps odd names as own properties', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, x: { type: 'string' } } };
    const out = withPropertyOrder(schema, { '': ['nope', 'x', 'constructor', '__proto__'] }) as { properties: object };
    expect(Object.keys(out.properties)).toEqual(['x', 'constructor']);
  });

  it('merges the base properties into each branch', () => {
    const n = buildModel({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'], oneOf: [{ title: 'A', properties: { a: { type: 'number' } } }] });
    expect(kinds(n)).toEqual({ oneOf: [['A', { 'id*': 'string', a: 'number' }]] });
  });

  it('labels a branch by its title, else its required keys', () => {
    const n = buildModel({ oneOf: [{ type: 'object', required: ['x', 'y'] }, { type: 'object', title: 'Named' }, { type: 'object' }] });
    expect(n.kind === 'choice' && n.branches.map((b) => b.label)).toEqual(['x, y', 'Named', 'Option 3']);
  });
});

function value(schema: unknown, edit?: (s: State) => State): { value: unknown; errors: InputError[] } {
  const node = buildModel(schema);
  const st = edit ? edit(initialState(node)) : initialState(node);
  return checkInput(schema, node, st);
}

const obj = (props: Record<string, State>): State => ({ k: 'object', props });

describe('collect and validate: form to input', () => {
  it('echo: empty text is sent as "" (required means present)', () => {
    expect(value(echo)).toEqual({ value: { text: '' }, errors: [] });
  });

  it('echo: the text', () => {
    expect(value(echo, () => obj({ text: { k: 'string', v: 'hi' } })).value).toEqual({ text: 'hi' });
  });

  it('kv counter: optional integer left out, bad pattern refused', () => {
    expect(value(counter, () => obj({ name: { k: 'string', v: 'c1' }, by: { k: 'number', v: '' } }))).toEqual({ value: { name: 'c1' }, errors: [] });
    expect(value(counter, () => obj({ name: { k: 'string', v: 'c 1' }, by: { k: 'number', v: '1.5' } })).errors).toEqual([
      { path: '/by', message: 'Must be an integer.' },
      { path: '/name', message: 'Must match the pattern ^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$.' },
    ]);
  });

  it('a number that is not one is an input error at its field', () => {
    expect(value(counter, () => obj({ name: { k: 'string', v: 'c' }, by: { k: 'number', v: '1e' } })).errors).toEqual([{ path: '/by', message: 'Enter a number.' }]);
  });

  it('report: rows of objects and the title', () => {
    const r = value(report, (s) => {
      if (s.k !== 'choice') throw new Error('want a choice');
      const st = obj({
        title: { k: 'string', v: 'Q3' },
        rows: { k: 'array', items: [obj({ label: { k: 'string', v: 'a' }, value: { k: 'number', v: '3' } }), obj({ label: { k: 'string', v: 'b' }, value: { k: 'number', v: '4.5' } })] },
      });
      return { ...s, states: [st, s.states[1]] };
    });
    expect(r).toEqual({ value: { rows: [{ label: 'a', value: 3 }, { label: 'b', value: 4.5 }], title: 'Q3' }, errors: [] });
  });

  it('report: errors point at the fields', () => {
    const r = value(report, (s) => {
      if (s.k !== 'choice') throw new Error('want a choice');
      const st = obj({ title: { k: 'string', v: '' }, rows: { k: 'array', items: [obj({ label: { k: 'string', v: 'a' }, value: { k: 'number', v: '-1' } }), obj({ label: { k: 'string', v: 'b' }, value: { k: 'number', v: '' } })] } });
      return { ...s, states: [st, s.states[1]] };
    });
    // In the fields' order: the schema's (rows before title here).
    expect(r.errors).toEqual([
      { path: '/rows/0/value', message: 'Must be at least 0.' },
      { path: '/rows/1/value', message: 'Required.' },
      { path: '/title', message: 'Must not be empty.' },
    ]);
  });

  it('report: the second branch takes raw JSON', () => {
    const r = value(report, (s) => (s.k === 'choice' ? { ...s, branch: 1, states: [s.states[0], obj({ a2ui_submit: { k: 'raw', v: '{"values":{}}' } })] } : s));
    expect(r).toEqual({ value: { a2ui_submit: { values: {} } }, errors: [] });
  });

  it('bad raw JSON is an input error', () => {
    const r = value(report, (s) => (s.k === 'choice' ? { ...s, branch: 1, states: [s.states[0], obj({ a2ui_submit: { k: 'raw', v: '{' } })] } : s));
    expect(r.errors[0].path).toBe('/a2ui_submit');
    expect(r.errors[0].message).toContain('Not valid JSON');
  });

  it('defaults fill the form', () => {
    const schema = {
      type: 'object',
      properties: {
        s: { type: 'string', default: 'x' },
        n: { type: 'number', default: 2 },
        b: { type: 'boolean', default: true },
        e: { type: 'string', enum: ['a', 'b'] },
        r: { type: 'string', enum: ['a', 'b'] },
        c: { const: 7 },
        t: { type: 'array', items: { type: 'string' }, default: ['p', 'q'] },
      },
      required: ['r'],
    };
    expect(value(schema).value).toEqual({ s: 'x', n: 2, b: true, r: 'a', c: 7, t: ['p', 'q'] });
  });

  it('an optional boolean is left out until set; a required one is false until checked', () => {
    const schema = { type: 'object', required: ['r'], properties: { o: { type: 'boolean' }, r: { type: 'boolean' } } };
    expect(value(schema).value).toEqual({ r: false });
    expect(value(schema, () => obj({ o: { k: 'boolean', v: false }, r: { k: 'boolean', v: true } })).value).toEqual({ o: false, r: true });
    const n = buildModel(schema);
    expect(collect(n, stateFromValue(n, { r: true }), '', [])).toEqual({ r: true });
    expect(collect(n, stateFromValue(n, { o: true, r: false }), '', [])).toEqual({ o: true, r: false });
  });

  it('an optional nested object with nothing set is left out', () => {
    const schema = { type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'string' } } } } };
    expect(value(schema).value).toEqual({});
    expect(value(schema, () => obj({ o: obj({ a: { k: 'string', v: 'z' } }) })).value).toEqual({ o: { a: 'z' } });
  });

  it('minItems starts with that many items', () => {
    const schema = { type: 'object', required: ['t'], properties: { t: { type: 'array', minItems: 2, items: { type: 'integer' } } } };
    const n = buildModel(schema);
    const st = initialState(n);
    expect(st.k === 'object' && st.props.t.k === 'array' && st.props.t.items.length).toBe(2);
    const errs: InputError[] = [];
    expect(collect(n, st, '', errs)).toEqual({ t: [null, null] });
  });

  it('stateFromValue goes back from JSON to the form', () => {
    const n = buildModel(report);
    const v = { title: 'T', rows: [{ label: 'a', value: 1 }] };
    const st = stateFromValue(n, v);
    expect(st.k === 'choice' && st.branch).toBe(0);
    expect(collect(n, st, '', [])).toEqual(v);
    const st2 = stateFromValue(n, { a2ui_submit: { x: 1 } });
    expect(st2.k === 'choice' && st2.branch).toBe(1);
    expect(collect(n, st2, '', [])).toEqual({ a2ui_submit: { x: 1 } });
  });
});

describe('validateSchema: mirrors the server', () => {
  it.each([
    ['type string', { type: 'string' }, 1, ['Must be a string.']],
    ['type integer', { type: 'integer' }, 1.5, ['Must be an integer.']],
    ['integer accepts 2.0', { type: 'integer' }, 2.0, []],
    ['number accepts integers', { type: 'number' }, 3, []],
    ['type list', { type: ['string', 'null'] }, null, []],
    ['type object', { type: 'object' }, [], ['Must be an object.']],
    ['enum', { enum: ['a', 'b'] }, 'c', ['Must be one of “a”, “b”.']],
    ['enum deep', { enum: [{ a: [1] }] }, { a: [1] }, []],
    ['const', { const: 'x' }, 'y', ['Must be “x”.']],
    ['minimum', { minimum: 0 }, -1, ['Must be at least 0.']],
    ['maximum', { maximum: 10 }, 11, ['Must be at most 10.']],
    ['minimum edge', { minimum: 0 }, 0, []],
    ['exclusiveMinimum', { exclusiveMinimum: 0 }, 0, ['Must be greater than 0.']],
    ['exclusiveMaximum', { exclusiveMaximum: 10 }, 10, ['Must be less than 10.']],
    ['draft-4 exclusive', { minimum: 0, exclusiveMinimum: true }, 0, ['Must be greater than 0.']],
    ['multipleOf', { multipleOf: 0.5 }, 0.75, ['Must be a multiple of 0.5.']],
    ['multipleOf float', { multipleOf: 0.1 }, 0.3, []],
    ['minLength', { minLength: 3 }, 'ab', ['At least 3 characters (2 given).']],
    ['maxLength in code points', { maxLength: 2 }, '😀😀', []],
    ['maxLength', { maxLength: 2 }, 'abc', ['At most 2 characters (3 given).']],
    ['pattern is unanchored', { pattern: 'b' }, 'abc', []],
    ['pattern', { pattern: '^a$' }, 'ab', ['Must match the pattern ^a$.']],
    ['bad pattern is left to the server', { pattern: '(' }, 'x', []],
    ['minItems', { minItems: 1 }, [], ['At least 1 item (0 given).']],
    ['maxItems', { maxItems: 1 }, [1, 2], ['At most 1 item (2 given).']],
    ['uniqueItems', { uniqueItems: true }, [1, 1], ['Items 0 and 1 are equal; items must be unique.']],
    ['items', { items: { type: 'string' } }, ['a', 1], ['Must be a string.']],
    ['required', { required: ['a'] }, {}, ['Required.']],
    ['additionalProperties false', { properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 }, ['Unknown property “b” is not allowed.']],
    ['additionalProperties schema', { additionalProperties: { type: 'number' } }, { b: 'x' }, ['Must be a number.']],
    ['patternProperties', { patternProperties: { '^x': { type: 'number' } }, additionalProperties: false }, { xa: 1 }, []],
    ['oneOf none', { oneOf: [{ required: ['a'] }, { required: ['b', 'c'] }] }, {}, ['Required.']],
    ['oneOf two', { oneOf: [{ type: 'object' }, { required: [] }] }, {}, ['Matches 2 of the alternatives; it must match exactly one.']],
    ['anyOf two is fine', { anyOf: [{ type: 'object' }, { required: [] }] }, {}, []],
    ['allOf', { allOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 1 }, ['Required.']],
    ['not', { not: { type: 'string' } }, 'x', ['Must not match the excluded schema.']],
    ['false schema', false, 1, ['No value is allowed here.']],
    ['$ref', { $ref: '#/$defs/n', $defs: { n: { type: 'number' } } }, 'x', ['Must be a number.']],
    ['format is not asserted', { format: 'email' }, 'not-an-email', []],
  ])('%s', (_, schema, v, messages) => {
    expect(validateSchema(schema, v).map((e) => e.message)).toEqual(messages);
  });

  it('names the JSON Pointer of each error, escaped', () => {
    const errs = validateSchema({ properties: { 'a/b': { type: 'object', required: ['c~d'] }, rows: { items: { required: ['x'] } } } }, { 'a/b': {}, rows: [{}, { x: 1 }, {}] });
    expect(errs.map((e) => e.path)).toEqual(['/a~1b/c~0d', '/rows/0/x', '/rows/2/x']);
  });

  it('the report schema: a report matches one branch, a submit the other, both or neither fail', () => {
    expect(validateSchema(report, { title: 'T', rows: [] })).toEqual([]);
    expect(validateSchema(report, { a2ui_submit: {} })).toEqual([]);
    expect(validateSchema(report, { title: 'T', rows: [], a2ui_submit: {} }).length).toBeGreaterThan(0);
    expect(validateSchema(report, {}).length).toBeGreaterThan(0);
  });
});
