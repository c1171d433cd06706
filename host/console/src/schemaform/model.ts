import { escapeToken, resolveRef } from './validate';

// The mapping from a tool's input_schema to a form: buildModel turns the
// schema into a tree of form nodes, initialState gives the inputs their
// defaults, collect turns the inputs into the JSON input, and
// stateFromValue goes back from JSON (the raw editor) to inputs. What the
// form cannot map becomes a `raw` node: a JSON text box for that value.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Base {
  title: string;
  description: string;
}

export interface Prop {
  name: string;
  required: boolean;
  node: Node;
}

export type Node =
  | (Base & { kind: 'object'; props: Prop[] })
  | (Base & { kind: 'string'; enum?: string[]; format?: string; multiline: boolean; default?: string })
  | (Base & { kind: 'number'; integer: boolean; min?: number; max?: number; exclusiveMin?: number; exclusiveMax?: number; step?: number; default?: number })
  | (Base & { kind: 'boolean'; default?: boolean })
  | (Base & { kind: 'array'; items: Node; minItems?: number; maxItems?: number; default?: unknown[] })
  | (Base & { kind: 'choice'; mode: 'oneOf' | 'anyOf'; branches: { label: string; node: Node }[] })
  | (Base & { kind: 'const'; value: unknown })
  | (Base & { kind: 'raw'; default?: unknown; reason: string });

export type State =
  | { k: 'object'; props: Record<string, State> }
  | { k: 'string'; v: string }
  | { k: 'number'; v: string }
  // v is null for an optional boolean left unset (then it is left out).
  | { k: 'boolean'; v: boolean | null }
  | { k: 'array'; items: State[] }
  | { k: 'choice'; branch: number; states: State[] }
  | { k: 'const' }
  | { k: 'raw'; v: string };

const MAX_DEPTH = 16;

function base(s: Obj, name: string): Base {
  return {
    title: typeof s.title === 'string' && s.title.trim() ? s.title.trim() : name,
    description: typeof s.description === 'string' ? s.description : '',
  };
}

function isObjectSchema(s: unknown): s is Obj {
  return isObj(s) && (s.type === 'object' || (s.type === undefined && (isObj(s.properties) || Array.isArray(s.required))));
}

const numOrUndef = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The label of a oneOf/anyOf branch: its title, else its required keys. */
export function branchLabel(b: Obj, i: number): string {
  if (typeof b.title === 'string' && b.title.trim()) return b.title.trim();
  if (Array.isArray(b.required) && b.required.length) return (b.required as string[]).join(', ');
  return `Option ${i + 1}`;
}

/**
 * A copy of schema whose `properties` objects list their keys in the
 * order given by order: a map from the JSON Pointer of an object schema
 * ("" for the root, "/properties/rows/items" for the items of rows) to its
 * property names in the manifest's order (the API's
 * input_property_orders of a tool). Names the order does not list follow in the
 * schema's own order. Without an order, the schema is returned as is.
 */
export function withPropertyOrder(schema: unknown, order: Record<string, string[]> | null | undefined): unknown {
  if (!order || Object.keys(order).length === 0) return schema;
  const walk = (v: unknown, ptr: string, depth: number): unknown => {
    if (depth > MAX_DEPTH * 4) return v;
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${ptr}/${i}`, depth + 1));
    if (!isObj(v)) return v;
    const out: Obj = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, `${ptr}/${escapeToken(k)}`, depth + 1)]));
    const want = order[ptr];
    if (isObj(out.properties) && Array.isArray(want)) {
      const own = new Map(Object.entries(out.properties));
      const sorted = new Map<string, unknown>();
      for (const k of want) if (typeof k === 'string' && own.has(k)) sorted.set(k, own.get(k));
      for (const [k, x] of own) if (!sorted.has(k)) sorted.set(k, x);
      out.properties = Object.fromEntries(sorted);
    }
    return out;
  };
  return walk(schema, '', 0);
}

/** Builds the form model of schema (name labels it when it has no title). */
export function buildModel(schema: unknown, name = 'Input', root: unknown = schema, depth = 0): Node {
  const raw = (reason: string, s: Obj = {}): Node => ({ ...base(s, name), kind: 'raw', reason, default: s.default });
  if (depth > MAX_DEPTH) return raw('nested too deeply');
  if (!isObj(schema)) return raw(schema === false ? 'no value is allowed' : 'any JSON value');
  let s = schema;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    if (!isObj(target) || Object.keys(s).some((k) => !['$ref', 'title', 'description', 'default'].includes(k))) return raw('a $ref schema', s);
    s = { ...target, ...s, $ref: undefined };
    delete s.$ref;
  }
  const b = base(s, name);
  for (const kw of ['allOf', 'not', 'if', 'prefixItems', 'dependentSchemas'] as const) {
    if (s[kw] !== undefined) return raw(`the schema uses ${kw}`, s);
  }
  if ('const' in s) return { ...b, kind: 'const', value: s.const };
  const alt = Array.isArray(s.oneOf) ? 'oneOf' : Array.isArray(s.anyOf) ? 'anyOf' : null;
  if (alt) {
    const branches = s[alt] as unknown[];
    if (s.oneOf !== undefined && s.anyOf !== undefined) return raw('the schema has both oneOf and anyOf', s);
    if (branches.length === 0 || !branches.every(isObjectSchema) || (s.type !== undefined && s.type !== 'object')) {
      return raw(`a ${alt} that is not a choice of objects`, s);
    }
    const props = isObj(s.properties) ? s.properties : {};
    const req = Array.isArray(s.required) ? (s.required as string[]) : [];
    return {
      ...b,
      kind: 'choice',
      mode: alt,
      branches: (branches as Obj[]).map((br, i) => {
        const merged: Obj = {
          type: 'object',
          properties: { ...props, ...(isObj(br.properties) ? br.properties : {}) },
          required: [...new Set([...req, ...(Array.isArray(br.required) ? (br.required as string[]) : [])])],
        };
        return { label: branchLabel(br, i), node: buildModel(merged, name, root, depth + 1) };
      }),
    };
  }
  let type = s.type;
  if (type === undefined) {
    if (Array.isArray(s.enum) && s.enum.every((e) => typeof e === 'string')) type = 'string';
    else if (isObjectSchema(s)) type = 'object';
  }
  if (Array.isArray(s.enum) && (type !== 'string' || !s.enum.every((e) => typeof e === 'string'))) return raw('an enum of non-strings', s);
  switch (type) {
    case 'object': {
      const props = isObj(s.properties) ? s.properties : null;
      if (!props) {
        if (s.additionalProperties === false) return { ...b, kind: 'object', props: [] };
        return raw('an object without listed properties', s);
      }
      const req = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      return {
        ...b,
        kind: 'object',
        // The fields keep the schema's order: the manifest's, when the API
        // gives it (withPropertyOrder).
        props: Object.entries(props).map(([k, ps]) => ({ name: k, required: req.has(k), node: buildModel(ps, k, root, depth + 1) })),
      };
    }
    case 'string': {
      const maxLength = numOrUndef(s.maxLength);
      return {
        ...b,
        kind: 'string',
        enum: Array.isArray(s.enum) ? (s.enum as string[]) : undefined,
        format: typeof s.format === 'string' ? s.format : undefined,
        multiline: maxLength === undefined || maxLength > 1024,
        default: typeof s.default === 'string' ? s.default : undefined,
      };
    }
    case 'number':
    case 'integer': {
      const excl = (v: unknown, bound: unknown) => (v === true ? numOrUndef(bound) : numOrUndef(v));
      const minIsExcl = s.exclusiveMinimum === true;
      const maxIsExcl = s.exclusiveMaximum === true;
      return {
        ...b,
        kind: 'number',
        integer: type === 'integer',
        min: minIsExcl ? undefined : numOrUndef(s.minimum),
        max: maxIsExcl ? undefined : numOrUndef(s.maximum),
        exclusiveMin: excl(s.exclusiveMinimum, s.minimum),
        exclusiveMax: excl(s.exclusiveMaximum, s.maximum),
        step: numOrUndef(s.multipleOf) ?? (type === 'integer' ? 1 : undefined),
        default: numOrUndef(s.default),
      };
    }
    case 'boolean':
      return { ...b, kind: 'boolean', default: typeof s.default === 'boolean' ? s.default : undefined };
    case 'array': {
      if (s.items === undefined || s.items === true || Array.isArray(s.items)) return raw('an array of any values', s);
      return {
        ...b,
        kind: 'array',
        items: buildModel(s.items, 'Item', root, depth + 1),
        minItems: numOrUndef(s.minItems),
        maxItems: numOrUndef(s.maxItems),
        default: Array.isArray(s.default) ? s.default : undefined,
      };
    }
  }
  return raw(Array.isArray(s.type) ? 'a value of several types' : 'a value of any type', s);
}

/** The inputs of node filled with the schema's defaults. */
export function initialState(node: Node, required = true): State {
  switch (node.kind) {
    case 'object':
      return { k: 'object', props: Object.fromEntries(node.props.map((p) => [p.name, initialState(p.node, p.required)])) };
    case 'string':
      return { k: 'string', v: node.default ?? (node.enum && required ? node.enum[0] ?? '' : '') };
    case 'number':
      return { k: 'number', v: node.default !== undefined ? String(node.default) : '' };
    case 'boolean':
      return { k: 'boolean', v: node.default ?? (required ? false : null) };
    case 'array':
      return node.default ? stateFromValue(node, node.default) : { k: 'array', items: Array.from({ length: node.minItems ?? 0 }, () => initialState(node.items)) };
    case 'choice':
      return { k: 'choice', branch: 0, states: node.branches.map((b) => initialState(b.node)) };
    case 'const':
      return { k: 'const' };
    case 'raw':
      return { k: 'raw', v: node.default !== undefined ? JSON.stringify(node.default, null, 2) : '' };
  }
}

/** A problem turning the inputs into JSON (a number that is not one, bad raw JSON). */
export interface InputError {
  path: string;
  message: string;
}

/**
 * The JSON value of the inputs, or undefined when the value is left out:
 * an optional empty string, an empty number, an empty raw box, an optional
 * empty array, an optional boolean left unset, an optional object none of
 * whose fields is set.
 */
export function collect(node: Node, state: State, path: string, errs: InputError[], required = true): unknown {
  switch (node.kind) {
    case 'object': {
      const st = state.k === 'object' ? state : (initialState(node) as Extract<State, { k: 'object' }>);
      const out: Obj = {};
      for (const p of node.props) {
        const v = collect(p.node, st.props[p.name] ?? initialState(p.node, p.required), `${path}/${escapeToken(p.name)}`, errs, p.required);
        if (v !== undefined) out[p.name] = v;
      }
      return required || Object.keys(out).length > 0 ? out : undefined;
    }
    case 'string': {
      const v = state.k === 'string' ? state.v : '';
      return v === '' && !required ? undefined : v;
    }
    case 'number': {
      const v = state.k === 'number' ? state.v.trim() : '';
      if (v === '') return undefined;
      const n = Number(v);
      if (!Number.isFinite(n)) {
        errs.push({ path, message: 'Enter a number.' });
        return undefined;
      }
      return n;
    }
    case 'boolean': {
      const v = state.k === 'boolean' ? state.v : null;
      return v ?? (required ? false : undefined);
    }
    case 'array': {
      const items = state.k === 'array' ? state.items : [];
      if (items.length === 0 && !required) return undefined;
      return items.map((it, i) => {
        const v = collect(node.items, it, `${path}/${i}`, errs, true);
        return v === undefined ? null : v;
      });
    }
    case 'choice': {
      const st = state.k === 'choice' ? state : (initialState(node) as Extract<State, { k: 'choice' }>);
      const br = node.branches[st.branch] ?? node.branches[0];
      return collect(br.node, st.states[st.branch] ?? initialState(br.node), path, errs, required);
    }
    case 'const':
      return node.value;
    case 'raw': {
      const v = state.k === 'raw' ? state.v.trim() : '';
      if (v === '') return undefined;
      try {
        return JSON.parse(v);
      } catch (e) {
        errs.push({ path, message: `Not valid JSON: ${(e as Error).message}` });
        return undefined;
      }
    }
  }
}

/** The inputs that show value (from the raw JSON editor) in the form. */
export function stateFromValue(node: Node, value: unknown): State {
  switch (node.kind) {
    case 'object': {
      const v = isObj(value) ? value : {};
      return {
        k: 'object',
        props: Object.fromEntries(node.props.map((p) => [p.name, p.name in v ? stateFromValue(p.node, v[p.name]) : initialState(p.node, p.required)])),
      };
    }
    case 'string':
      return { k: 'string', v: typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value) };
    case 'number':
      return { k: 'number', v: typeof value === 'number' ? String(value) : '' };
    case 'boolean':
      return { k: 'boolean', v: typeof value === 'boolean' ? value : null };
    case 'array':
      return { k: 'array', items: Array.isArray(value) ? value.map((it) => stateFromValue(node.items, it)) : [] };
    case 'choice': {
      // The first branch whose required keys are all present.
      const keys = isObj(value) ? Object.keys(value) : [];
      let branch = node.branches.findIndex(
        (b) => b.node.kind === 'object' && b.node.props.filter((p) => p.required).every((p) => keys.includes(p.name)),
      );
      if (branch < 0) branch = 0;
      return { k: 'choice', branch, states: node.branches.map((b, i) => (i === branch ? stateFromValue(b.node, value) : initialState(b.node))) };
    }
    case 'const':
      return { k: 'const' };
    case 'raw':
      return { k: 'raw', v: value === undefined ? '' : JSON.stringify(value, null, 2) };
  }
}

/** Whether the form can show the schema at all (its root is not raw). */
export function formable(node: Node): boolean {
  return node.kind !== 'raw';
}
