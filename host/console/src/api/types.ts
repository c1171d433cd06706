// The JSON shapes of palyra-host's API (the json tags of the Go structs in
// host/install, host/daemon, host/supervisor, host/hooks, host/events).

export interface RuntimeStatus {
  status: string;
  source: string;
  quarantine_status: string;
  reason?: string;
  detected_at_ms?: number;
  operator_principal?: string;
}

export interface Listing {
  skill_id: string;
  version: string;
  publisher: string;
  current: boolean;
  installed_at_unix_ms: number;
  artifact_sha256: string;
  payload_sha256: string;
  signature_key_id: string;
  trust_decision: string;
  source: { kind: string; reference: string };
  missing_secrets: { scope: string; key: string }[];
  /** Required config keys with neither a value nor a default (not eligible while any). */
  missing_config?: string[] | null;
  /** Config values kept that this version's schema does not accept. */
  unfit_config?: { key: string; reason: string }[] | null;
  install_state: string;
  skill_name: string;
  tool_count: number;
  status: string;
  runtime_status: RuntimeStatus;
  requirements: { required_protocol_major: number; min_palyra_version: string; max_palyra_version?: string };
  eligibility: { status: string; eligible: boolean; reasons: string[] };
  install_dir: string;
}

export interface SkillList {
  skills_root: string;
  count: number;
  entries: Listing[];
}

export interface ToolEntry {
  id: string;
  name: string;
  description: string;
  input_schema?: unknown;
  output_schema?: unknown;
  risk?: { default_sensitive?: boolean; requires_approval?: boolean };
  /** The tool is for hooks only (the manifest's hooks_only): not offered to run from the console or to MCP clients. */
  hooks_only?: boolean;
}

export interface Manifest {
  skill_id: string;
  name: string;
  version: string;
  publisher: string;
  entrypoints?: { tools?: ToolEntry[] };
  capabilities?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface AuditCheck {
  check_id: string;
  status: string;
  severity: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface AuditReport {
  skill_id: string;
  version: string;
  passed: boolean;
  should_quarantine: boolean;
  trust_decision: string;
  generated_at_unix_ms: number;
  checks: AuditCheck[];
  quarantine_reasons: string[];
  manifest_warnings?: unknown[];
  [k: string]: unknown;
}

export interface HistoryEvent {
  id: number;
  at: string;
  kind: string;
  skill_id: string;
  version?: string;
  status?: string;
  reason?: string;
  operator_principal: string;
  details?: unknown;
}

export interface SkillInfo {
  inventory: Listing;
  manifest: Manifest;
  /**
   * By tool id, the order in which skill.toml writes the properties of
   * each object schema of the tool's input_schema, by the JSON Pointer of
   * the object schema ("" for input_schema itself): the schemas in
   * manifest come with sorted keys.
   */
  input_property_orders?: Record<string, Record<string, string[]>>;
  signature?: Record<string, unknown>;
  artifact_entries: { path: string; bytes: number; sha256: string }[];
  cached_artifact_path: string;
  artifact_error?: string;
  artifact_error_code?: string;
  grants?: unknown;
  audit_report?: AuditReport;
  status_history: HistoryEvent[] | null;
}

export interface SidecarState {
  skill_id: string;
  version: string;
  status: string;
  pid?: number;
  restarts: number;
  crashes: number;
  in_flight: number;
  queued: number;
  last_error?: string;
  last_used?: string;
  cache_hit: boolean;
}

export interface SkillMetrics {
  skill_id: string;
  calls_total: number;
  errors_total: number;
  by_code: Record<string, number>;
  by_tool: Record<string, number>;
  duration_ms: { mean: number; p50: number; p95: number; max: number };
  fuel_consumed_total: number;
  peak_memory_bytes_max?: number;
  last_call_at?: string;
  capabilities?: Record<string, unknown>;
}

export interface CallStats {
  fuel_consumed: number;
  init_fuel_consumed?: number;
  peak_memory_bytes: number;
  wall_time_ns: number;
  capability_calls: number;
  prepared: boolean;
}

export interface CallResponse {
  invocation_id: string;
  skill_id: string;
  version: string;
  tool_id: string;
  output: unknown;
  exit_code: number;
  stats: CallStats;
  logs?: { level: string; message: string }[];
  tool_error?: { code: string; message: string };
  a2ui?: { document_id: string; surface: string; patch?: unknown };
  /** What run-phase hooks said about the call (annotate, or a fail-open hook's failure). */
  annotations?: HookAnnotation[];
  /** The text a run:before_delivery hook set (transform_preview); the output is unchanged. */
  preview?: { hook_id: string; text: string };
  /** Set (HTTP 202) when the call needs approval and did not run. */
  pending?: PendingApproval;
}

export interface HookAnnotation {
  hook_id: string;
  event: string;
  message?: string;
  data?: unknown;
  code?: string;
  error?: string;
}

/** One reason a call needs approval (host.ApprovalReason). */
export interface ApprovalReason {
  kind: 'manifest' | 'profile' | 'hook' | string;
  detail: string;
}

/** The approval a call waits for (host.PendingApproval). */
export interface PendingApproval {
  id: string;
  skill_id: string;
  version: string;
  tool_id: string;
  input_sha256: string;
  reasons: ApprovalReason[] | null;
  expires_at: string;
}

/** An approval and the grants of its version (host.ApprovalInfo). */
export interface Approval {
  id: string;
  skill_id: string;
  version: string;
  tool_id: string;
  input: unknown;
  input_sha256: string;
  reasons: ApprovalReason[] | null;
  requested_by: string;
  requested_at: string;
  expires_at: string;
  state: 'pending' | 'approved' | 'denied' | 'expired' | 'used';
  decided_by?: string;
  decided_at?: string;
  reason?: string;
  used_by?: string;
  used_at?: string;
  grants?: Grants | null;
}

export interface ApprovalList {
  count: number;
  approvals: Approval[] | null;
}

export interface HookBinding {
  hook_id: string;
  event: string;
  plugin_id: string;
  tool_id?: string;
  timeout_ms?: number;
  /** Run phases: "open" or "closed" when the hook fails; absent: closed for run:before_*, open for run:after_*. */
  on_failure?: 'open' | 'closed';
  enabled: boolean;
  operator: { display_name?: string; notes?: string; owner_principal?: string; updated_by?: string };
  created_at_unix_ms: number;
  updated_at_unix_ms: number;
}

export interface StreamEvent {
  id: number;
  kind: string;
  skill_id: string;
  version: string;
  status?: string;
  reason?: string;
  operator_principal?: string;
  at: string;
  details?: Record<string, unknown>;
}

/** One node of the cluster as its last heartbeat described it (host.NodeStatus). */
export interface NodeStatus {
  name: string;
  version?: string;
  live: boolean;
  last_seen: string;
  skills: string[] | null;
  sidecars_alive: number;
  calls_per_second: number;
  applied: number;
  labels?: Record<string, string>;
  started_at?: string;
}

/** GET /v1/cluster (host.ClusterStatus): a daemon that is not clustered is a cluster of one. */
export interface ClusterStatus {
  clustered: boolean;
  cluster?: string;
  node: string;
  stream_last: number;
  nodes: NodeStatus[] | null;
}

/** Where an artifact comes from (host.SourceRef, the JSON body of POST /v1/skills): an OCI reference, or a registry index entry. */
export interface SourceRef {
  source?: string;
  plain_http?: boolean;
  registry_url?: string;
  registry_dir?: string;
  skill_id?: string;
  version?: string;
  registry_ca_cert?: string;
}

/** What a skill is granted (policy.Grants). */
export interface Grants {
  http_hosts: string[] | null;
  secret_keys: string[] | null;
  storage_prefixes: string[] | null;
  storage_read_only?: string[] | null;
  secret_read?: boolean;
  channels: string[] | null;
  device_capabilities?: string[] | null;
  node_capabilities?: string[] | null;
  http?: { schemes?: string[] | null; ports?: number[] | null; allow_private?: boolean };
}

/** The per-invocation limits (policy.Limits; durations in nanoseconds). */
export interface Limits {
  fuel: number;
  max_memory_bytes: number;
  wall_clock_ns: number;
  max_storage_bytes?: number;
  max_storage_keys?: number;
  [k: string]: unknown;
}

/** What a new version is granted beyond the current one (policy.Escalation). */
export interface Escalation {
  http_hosts?: string[];
  secret_keys?: string[];
  storage_prefixes?: string[];
  storage_writable?: string[];
  channels?: string[];
  device_capabilities?: string[];
  node_capabilities?: string[];
  http_schemes?: string[];
  http_ports?: number[];
  allow_private?: boolean;
  raised?: { name: string; old: number; new: number }[];
}

/** An install's (or a dry run's) result (install.InstallResult). */
export interface InstallResult {
  event_kind: string;
  skill_id: string;
  version: string;
  publisher: string;
  artifact_sha256: string;
  signature_key_id: string;
  trust_decision: string;
  source: { kind: string; reference: string };
  installed: boolean;
  status: string;
  reasons: string[] | null;
  current: boolean;
  previous_version?: string;
  capability_diff: string[] | null;
  escalation: Escalation;
  tool_count: number;
  grants: Grants;
  policy?: { limits?: Limits; violations?: { capability: string; value: string; reason: string }[] | null } | null;
  missing_secrets?: { scope: string; key: string }[] | null;
  [k: string]: unknown;
}

/** GET /v1/skills/outdated (host.OutdatedReport). */
export interface OutdatedReport {
  skills: OutdatedSkill[] | null;
}

export interface OutdatedSkill {
  skill_id: string;
  current_version: string;
  latest_version?: string;
  outdated: boolean;
  source: { kind: string; reference: string };
  error?: string;
  code?: string;
}

/** POST /v1/skills/{id}/update (host.UpdateResult). */
export interface UpdateResult {
  skill_id: string;
  from_version: string;
  to_version: string;
  updated: boolean;
  reason?: string;
  dry_run?: boolean;
  source: { kind: string; reference: string };
  capability_diff: string[] | null;
  escalation: Escalation;
  install?: InstallResult;
}

/** One key of a skill's operator config (host.ConfigEntry). */
export interface ConfigEntry {
  key: string;
  type?: string;
  required?: boolean;
  sensitive?: boolean;
  set: boolean;
  /** The value set; "***" for a sensitive key that is set. */
  value?: unknown;
  default?: unknown;
  declared: boolean;
  problem?: string;
  updated_at_unix_ms?: number;
  operator_principal?: string;
}

/** A skill's operator config (host.SkillConfig, GET /v1/skills/{id}/config). */
export interface SkillConfig {
  skill_id: string;
  version: string;
  schema?: Record<string, unknown>;
  sensitive?: string[] | null;
  entries: ConfigEntry[];
  missing: string[];
  unfit?: { key: string; reason: string }[] | null;
}
