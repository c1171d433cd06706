// A JSON Schema validator for the keywords a tool's input form can hold,
// with the semantics of the server's validator (santhosh-tekuri/jsonschema,
// draft 2020-12): type, enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum (numbers, or draft-4 booleans), multipleOf, minLength
// and maxLength (in code points), pattern (unanchored ECMA regex), items,
// prefixItems, minItems, maxItems, uniqueItems, properties, required,
// patternProperties, additionalProperties, minProperties, maxProperties,
// allOf, anyOf, oneOf, not and local $ref. Keywords it does not know are
// left to the server (format is an annotation there too). Each error names
// the JSON Pointer of the value at fault.

export interface SchemaError {
  /** JSON Pointer of the instance value ("" is the whole input). */
  path: string;
  message: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_DEPTH = 64;

export function escapeToken(t: string): string {
  return t.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const regexCache = new Map<string, RegExp | null>();
export function compilePattern(p: string): RegExp | null {
  if (!regexCache.has(p)) {
    let re: RegExp | null = null;
    try {
      re = new RegExp(p, 'u');
    } catch {
      try {
        re = new RegExp(p);
      } catch {
        re = null;
      }
    }
    regexCache.set(p, re);
  }
  return regexCache.get(p) ?? null;
}

function typeMatches(t: string, v: unknown): boolean {
  const jt = jsonType(v);
  if (t === 'number') return jt === 'number' || jt === 'integer';
  return t === jt;
}

export function show(v: unknown): string {
  return typeof v === 'string' ? `“${v}”` : JSON.stringify(v);
}

/** Resolves a local $ref ("#", "#/$defs/x") against root. */
export function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const t = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObj(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Obj)[t];
  }
  return cur;
}

export function validateSchema(schema: unknown, value: unknown, path = '', root: unknown = schema, depth = 0): SchemaError[] {
  const errs: SchemaError[] = [];
  if (depth > MAX_DEPTH) return errs;
  if (schema === false) return [{ path, message: 'No value is allowed here.' }];
  if (!isObj(schema)) return errs;
  const s = schema;
  const add = (message: string, at = path) => errs.push({ path: at, message });
  const sub = (sch: unknown, v: unknown, at: string) => errs.push(...validateSchema(sch, v, at, root, depth + 1));

  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    if (target !== undefined) sub(target, value, path);
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => typeMatches(t, value))) {
      add(`Must be ${types.map((t) => (t === 'integer' ? 'an integer' : t === 'object' || t === 'array' ? `an ${t}` : `a ${t}`)).join(' or ')}.`);
      return errs; // the other keywords would only repeat it
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value))) add(`Must be one of ${s.enum.map(show).join(', ')}.`);
  if ('const' in s && !deepEqual(s.const, value)) add(`Must be ${show(s.const)}.`);

  if (typeof value === 'number') {
    const n = value;
    if (typeof s.minimum === 'number') {
      if (s.exclusiveMinimum === true ? n <= s.minimum : n < s.minimum) add(`Must be ${s.exclusiveMinimum === true ? 'greater than' : 'at least'} ${s.minimum}.`);
    }
    if (typeof s.maximum === 'number') {
      if (s.exclusiveMaximum === true ? n >= s.maximum : n > s.maximum) add(`Must be ${s.exclusiveMaximum === true ? 'less than' : 'at most'} ${s.maximum}.`);
    }
    if (typeof s.exclusiveMinimum === 'number' && n <= s.exclusiveMinimum) add(`Must be greater than ${s.exclusiveMinimum}.`);
    if (typeof s.exclusiveMaximum === 'number' && n >= s.exclusiveMaximum) add(`Must be less than ${s.exclusiveMaximum}.`);
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0) {
      const q = n / s.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) add(`Must be a multiple of ${s.multipleOf}.`);
    }
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (typeof s.minLength === 'number' && len < s.minLength) add(s.minLength === 1 ? 'Must not be empty.' : `At least ${s.minLength} characters (${len} given).`);
    if (typeof s.maxLength === 'number' && len > s.maxLength) add(`At most ${s.maxLength} characters (${len} given).`);
    if (typeof s.pattern === 'string') {
      const re = compilePattern(s.pattern);
      if (re && !re.test(value)) add(`Must match the pattern ${s.pattern}.`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) add(`At least ${s.minItems} item${s.minItems === 1 ? '' : 's'} (${value.length} given).`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) add(`At most ${s.maxItems} item${s.maxItems === 1 ? '' : 's'} (${value.length} given).`);
    if (s.uniqueItems === true) {
      for (let i = 0; i < value.length; i++) {
        for (let j = 0; j < i; j++) if (deepEqual(value[i], value[j])) add(`Items ${j} and ${i} are equal; items must be unique.`);
      }
    }
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? (s.items as unknown[]) : [];
    prefix.forEach((sch, i) => {
      if (i < value.length) sub(sch, value[i], `${path}/${i}`);
    });
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    if (rest !== undefined) value.slice(prefix.length).forEach((v, i) => sub(rest, v, `${path}/${i + prefix.length}`));
  }
  if (isObj(value)) {
    const props = isObj(s.properties) ? s.properties : {};
    const pats = isObj(s.patternProperties) ? Object.entries(s.patternProperties) : [];
    if (Array.isArray(s.required)) {
      for (const k of s.required as string[]) if (!Object.prototype.hasOwnProperty.call(value, k)) add('Required.', `${path}/${escapeToken(k)}`);
    }
    const keys = Object.keys(value);
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties) add(`At least ${s.minProperties} properties.`);
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) add(`At most ${s.maxProperties} properties.`);
    for (const k of keys) {
      const at = `${path}/${escapeToken(k)}`;
      let known = false;
      if (Object.prototype.hasOwnProperty.call(props, k)) {
        known = true;
        sub(props[k], value[k], at);
      }
      for (const [p, sch] of pats) {
        const re = compilePattern(p);
        if (re && re.test(k)) {
          known = true;
          sub(sch, value[k], at);
        }
      }
      if (!known && s.additionalProperties !== undefined) {
        if (s.additionalProperties === false) add(`Unknown property “${k}” is not allowed.`, at);
        else sub(s.additionalProperties, value[k], at);
      }
    }
  }
  if (Array.isArray(s.allOf)) for (const sch of s.allOf) sub(sch, value, path);
  for (const kw of ['anyOf', 'oneOf'] as const) {
    const branches = s[kw];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const results = branches.map((b) => validateSchema(b, value, path, root, depth + 1));
    const ok = results.filter((r) => r.length === 0).length;
    if (ok === 0) {
      // Show the problems of the branch that came closest.
      const best = results.reduce((a, b) => (b.length < a.length ? b : a));
      errs.push(...best);
    } else if (kw === 'oneOf' && ok > 1) {
      add(`Matches ${ok} of the alternatives; it must match exactly one.`);
    }
  }
  if (s.not !== undefined && validateSchema(s.not, value, path, root, depth + 1).length === 0) add('Must not match the excluded schema.');
  return errs;
}
