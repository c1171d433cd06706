// The JSON-Patch subset of A2UI updates (facts §9.2), with the semantics and
// limits of host/a2ui/patch.go: {"v":1,"ops":[{op,path,value?}]}, 1 to 256
// ops of add, replace or remove; add and replace take a value, remove none;
// a path is "" or starts with "/", is at most 512 UTF-16 code units, uses
// only the ~0 and ~1 escapes and has no token __proto__, prototype or
// constructor; remove of the root is an error. Ops apply in order to a copy:
// a failed patch leaves the document as it was.

export const MAX_PATCH_OPS = 256;
export const MAX_PATCH_PATH = 512;

export type PatchErrorCode = 'invalid_patch' | 'conflict' | 'budget_exceeded';

export class PatchError extends Error {
  constructor(
    readonly code: PatchErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(`${code}: ${path ? path + ': ' : ''}${message}`);
    this.name = 'PatchError';
  }
}

export interface PatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

type Obj = Record<string, unknown>;
const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Parses an RFC 6901 pointer into its unescaped tokens ("" is []). */
export function parsePointer(path: string, at = ''): string[] {
  if (path === '') return [];
  if (path[0] !== '/') throw new PatchError('invalid_patch', at, `path ${JSON.stringify(path)} does not start with /`);
  return path
    .slice(1)
    .split('/')
    .map((t) => {
      if (/~(?![01])/.test(t)) throw new PatchError('invalid_patch', at, `path ${JSON.stringify(path)} has a ~ that is not ~0 or ~1`);
      const u = t.replace(/~1/g, '/').replace(/~0/g, '~');
      if (FORBIDDEN.has(u)) throw new PatchError('invalid_patch', at, `path ${JSON.stringify(path)} has the forbidden token ${JSON.stringify(u)}`);
      return u;
    });
}

/** Checks a patch's shape and returns its ops; throws PatchError. */
export function parsePatch(patch: unknown): PatchOp[] {
  if (!isObj(patch)) throw new PatchError('invalid_patch', '', 'the patch is not an object');
  for (const k of Object.keys(patch)) {
    if (k !== 'v' && k !== 'ops') throw new PatchError('invalid_patch', `/${k}`, 'unknown key (want v, ops)');
  }
  if (patch.v !== 1) throw new PatchError('invalid_patch', '/v', 'want 1');
  const ops = patch.ops;
  if (!Array.isArray(ops)) throw new PatchError('invalid_patch', '/ops', 'want an array');
  if (ops.length === 0) throw new PatchError('invalid_patch', '/ops', `no ops (want 1 to ${MAX_PATCH_OPS})`);
  if (ops.length > MAX_PATCH_OPS) {
    throw new PatchError('budget_exceeded', '/ops', `op count is ${ops.length}, over the limit of ${MAX_PATCH_OPS}`);
  }
  return ops.map((o, i) => {
    const at = `/ops/${i}`;
    if (!isObj(o)) throw new PatchError('invalid_patch', at, 'want an object');
    for (const k of Object.keys(o)) {
      if (k !== 'op' && k !== 'path' && k !== 'value') throw new PatchError('invalid_patch', `${at}/${k}`, 'unknown key (want op, path, value)');
    }
    if (o.op !== 'add' && o.op !== 'replace' && o.op !== 'remove') {
      throw new PatchError('invalid_patch', `${at}/op`, `unknown op ${JSON.stringify(o.op)} (want add, replace, remove)`);
    }
    if (typeof o.path !== 'string') throw new PatchError('invalid_patch', `${at}/path`, 'want a string');
    if (o.path.length > MAX_PATCH_PATH) {
      throw new PatchError('budget_exceeded', `${at}/path`, `length is ${o.path.length}, over the limit of ${MAX_PATCH_PATH}`);
    }
    if (o.op === 'remove' && has(o, 'value')) throw new PatchError('invalid_patch', `${at}/value`, 'remove takes no value');
    if (o.op !== 'remove' && !has(o, 'value')) throw new PatchError('invalid_patch', `${at}/value`, `${o.op} takes a value`);
    const tokens = parsePointer(o.path, `${at}/path`);
    if (tokens.length === 0 && o.op === 'remove') throw new PatchError('invalid_patch', `${at}/path`, 'remove of the root');
    return o.op === 'remove' ? { op: o.op, path: o.path } : { op: o.op, path: o.path, value: o.value };
  });
}

/** A canonical array index: 0 or digits without a leading zero. */
function index(t: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(t)) throw new Error(`${JSON.stringify(t)} is not a canonical array index`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new Error(`index ${t} is out of range`);
  return n;
}

function child(v: unknown, t: string): unknown {
  if (Array.isArray(v)) {
    const i = index(t);
    if (i >= v.length) throw new Error(`no index ${i} (length ${v.length})`);
    return v[i];
  }
  if (isObj(v)) {
    if (!has(v, t)) throw new Error(`no key ${JSON.stringify(t)}`);
    return v[t];
  }
  throw new Error(`a ${v === null ? 'null' : typeof v} has no members`);
}

function applyOp(root: unknown, op: PatchOp, tokens: string[]): unknown {
  if (tokens.length === 0) return structuredClone(op.value);
  let parent = root;
  for (const t of tokens.slice(0, -1)) parent = child(parent, t);
  const last = tokens[tokens.length - 1];
  const value = op.op === 'remove' ? undefined : structuredClone(op.value);
  if (Array.isArray(parent)) {
    if (op.op === 'add' && last === '-') {
      parent.push(value);
      return root;
    }
    const i = index(last);
    if (op.op === 'add') {
      if (i > parent.length) throw new Error(`index ${i} is beyond the length ${parent.length}`);
      parent.splice(i, 0, value);
    } else if (i >= parent.length) {
      throw new Error(`no index ${i} (length ${parent.length})`);
    } else if (op.op === 'replace') {
      parent[i] = value;
    } else {
      parent.splice(i, 1);
    }
    return root;
  }
  if (isObj(parent)) {
    if (op.op === 'add') {
      Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
    } else if (!has(parent, last)) {
      throw new Error(`no key ${JSON.stringify(last)}`);
    } else if (op.op === 'replace') {
      parent[last] = value;
    } else {
      delete parent[last];
    }
    return root;
  }
  throw new Error(`the parent is a ${parent === null ? 'null' : typeof parent}, not an object or array`);
}

/**
 * Applies patch to doc (any JSON value) and returns the new value; doc is
 * not changed. Throws PatchError: invalid_patch or budget_exceeded for a
 * malformed patch, conflict for an op that does not apply.
 */
export function applyPatch(doc: unknown, patch: unknown): unknown {
  const ops = parsePatch(patch);
  let root = structuredClone(doc);
  ops.forEach((op, i) => {
    const tokens = parsePointer(op.path);
    try {
      root = applyOp(root, op, tokens);
    } catch (e) {
      throw new PatchError('conflict', `/ops/${i}/path`, `${op.op} ${JSON.stringify(op.path)}: ${(e as Error).message}`);
    }
  });
  return root;
}
