// The console's calls to palyra-host's JSON API, on the same origin, each
// with the admin token as a bearer token. The token lives in
// sessionStorage: it is gone when the tab closes. A 401 from any call ends
// the session (the app goes back to the login screen and says why).

const TOKEN_KEY = 'palyra.console.token';

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null) {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
}

/** An error the API answered: {"error":{"code","message","request_id"},"details":...}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = (e: ApiError) => void;
const unauthorizedListeners = new Set<Listener>();

/** Calls fn when any call gets a 401; returns the unsubscribe function. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export function reportUnauthorized(e: ApiError) {
  for (const fn of unauthorizedListeners) fn(e);
}

/** Reads an error body into an ApiError. */
export async function errorOf(res: Response): Promise<ApiError> {
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  let requestId: string | undefined = res.headers.get('X-Request-Id') ?? undefined;
  let details: unknown;
  try {
    const body = await res.json();
    if (body && typeof body === 'object' && body.error) {
      code = String(body.error.code ?? code);
      message = String(body.error.message ?? message);
      requestId = body.error.request_id ?? requestId;
      details = body.details;
    }
  } catch {
    // Not JSON: keep the status line.
  }
  return new ApiError(res.status, code, message, requestId, details);
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Raw bytes sent as application/octet-stream instead of JSON. */
  raw?: Blob | ArrayBuffer;
  signal?: AbortSignal;
  /** The token to use instead of the stored one (the login check). */
  token?: string;
}

export async function request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = opts.token ?? getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (opts.raw !== undefined) {
    headers['Content-Type'] = 'application/octet-stream';
    body = opts.raw;
  } else if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network_error', `The daemon could not be reached: ${(e as Error).message}`);
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && opts.token === undefined) reportUnauthorized(err);
    throw err;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

const enc = encodeURIComponent;

/** Builds a query string from the set values. */
export function query(params: Record<string, string | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '' || v === false) continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  skills: (f: { skill_id?: string; publisher?: string; current_only?: boolean; quarantined_only?: boolean; eligible_only?: boolean } = {}, signal?: AbortSignal) =>
    request<import('./types').SkillList>(`/v1/skills${query(f)}`, { signal }),
  skill: (id: string, version?: string, signal?: AbortSignal) =>
    request<import('./types').SkillInfo>(`/v1/skills/${enc(id)}${query({ version })}`, { signal }),
  sidecars: (signal?: AbortSignal) => request<{ sidecars: import('./types').SidecarState[] | null }>('/v1/sidecars', { signal }),
  cluster: (signal?: AbortSignal) => request<import('./types').ClusterStatus>('/v1/cluster', { signal }),
  metrics: (id: string, signal?: AbortSignal) => request<import('./types').SkillMetrics>(`/v1/skills/${enc(id)}/metrics`, { signal }),
  install: (artifact: Blob, flags: { allow_tofu: boolean; accept_capabilities: boolean; force: boolean; dry_run?: boolean }) =>
    request<import('./types').InstallResult>(`/v1/skills${query(flags)}`, { method: 'POST', raw: artifact }),
  /** Installs (or, with dry_run, checks) an artifact fetched from a registry: POST /v1/skills with a JSON body. */
  installFrom: (ref: import('./types').SourceRef, flags: { allow_tofu: boolean; accept_capabilities: boolean; force: boolean; dry_run: boolean }) =>
    request<import('./types').InstallResult>('/v1/skills', { method: 'POST', body: { ...ref, ...flags } }),
  outdated: (skillId?: string, signal?: AbortSignal) => request<import('./types').OutdatedReport>(`/v1/skills/outdated${query({ skill_id: skillId })}`, { signal }),
  update: (id: string, body: { version?: string; dry_run: boolean; accept_capabilities: boolean; allow_tofu: boolean }) =>
    request<import('./types').UpdateResult>(`/v1/skills/${enc(id)}/update`, { method: 'POST', body }),
  verify: (id: string, version?: string) => request<unknown>(`/v1/skills/${enc(id)}/verify`, { method: 'POST', body: { version: version ?? '' } }),
  audit: (id: string, version?: string) => request<unknown>(`/v1/skills/${enc(id)}/audit`, { method: 'POST', body: { version: version ?? '' } }),
  quarantine: (id: string, version: string | undefined, reason: string) =>
    request<unknown>(`/v1/skills/${enc(id)}/quarantine`, { method: 'POST', body: { version: version ?? '', reason } }),
  enable: (id: string, version: string | undefined, reason: string, override: boolean) =>
    request<unknown>(`/v1/skills/${enc(id)}/enable`, { method: 'POST', body: { version: version ?? '', reason, override } }),
  disable: (id: string, version: string | undefined, reason: string) =>
    request<unknown>(`/v1/skills/${enc(id)}/disable`, { method: 'POST', body: { version: version ?? '', reason } }),
  /** Removes a version; with force, also disables the enabled hook bindings that run the skill when no version would be left (else 412 skill_referenced_by_hook). */
  remove: (id: string, version: string | undefined, purge: boolean, force = false) =>
    request<unknown>(`/v1/skills/${enc(id)}${query({ version, purge_storage: purge, force })}`, { method: 'DELETE' }),
  reaudit: () => request<unknown>('/v1/reaudit', { method: 'POST' }),
  config: (id: string, signal?: AbortSignal) => request<import('./types').SkillConfig>(`/v1/skills/${enc(id)}/config`, { signal }),
  setConfig: (id: string, values: Record<string, unknown>) =>
    request<import('./types').SkillConfig>(`/v1/skills/${enc(id)}/config`, { method: 'PATCH', body: { values } }),
  unsetConfig: (id: string, keys: string[]) =>
    request<import('./types').SkillConfig>(`/v1/skills/${enc(id)}/config?${keys.map((k) => `key=${enc(k)}`).join('&')}`, { method: 'DELETE' }),
  call: (id: string, tool: string, input: unknown, timeoutMs?: number, approvalId?: string) =>
    request<import('./types').CallResponse>(`/v1/skills/${enc(id)}/tools/${enc(tool)}/call`, {
      method: 'POST',
      body: { input, ...(timeoutMs ? { timeout_ms: timeoutMs } : {}), ...(approvalId ? { approval_id: approvalId } : {}) },
    }),
  approvals: (f: { state?: string; skill_id?: string } = {}, signal?: AbortSignal) =>
    request<import('./types').ApprovalList>(`/v1/approvals${query(f)}`, { signal }),
  approval: (id: string, signal?: AbortSignal) => request<import('./types').Approval>(`/v1/approvals/${enc(id)}`, { signal }),
  decideApproval: (id: string, approve: boolean, reason: string) =>
    request<import('./types').Approval>(`/v1/approvals/${enc(id)}/${approve ? 'approve' : 'deny'}`, { method: 'POST', body: reason ? { reason } : {} }),
  submit: (documentId: string, s: import('../a2ui/types').Submit) =>
    request<import('./types').CallResponse>(`/v1/a2ui/${enc(documentId)}/submit`, { method: 'POST', body: s }),
  hooks: () => request<{ bindings: import('./types').HookBinding[] | null }>('/v1/hooks'),
  bindHook: (b: { hook_id: string; event: string; plugin_id: string; tool_id?: string; enabled: boolean; timeout_ms?: number; on_failure?: 'open' | 'closed'; operator?: { display_name?: string; notes?: string } }) =>
    request<import('./types').HookBinding>('/v1/hooks', { method: 'POST', body: b }),
  setHookEnabled: (id: string, enabled: boolean) => request<unknown>(`/v1/hooks/${enc(id)}/${enabled ? 'enable' : 'disable'}`, { method: 'POST' }),
  removeHook: (id: string) => request<unknown>(`/v1/hooks/${enc(id)}`, { method: 'DELETE' }),
  check: (token: string) => request<unknown>('/v1/sidecars', { token }),
};
