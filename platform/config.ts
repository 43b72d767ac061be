/**
 * Every setting comes from the environment (twelve-factor); this is the one place that reads it.
 * CONFIG_VARIABLES lists each variable with its default; README's configuration table has
 * exactly its rows (test/config.test.ts compares them).
 */
import os from 'node:os';
import path from 'node:path';
import type { AuditBudgets } from '../domain/audits/budgets';
import { parsePriceTable, type ModelPrice } from '../domain/audits/pricing';
import { allowListEntryProblem, type SshAccess } from '../domain/repositories/source-policy';

export interface ConfigVariable {
  name: string;
  /** As README shows it; a leading `value` in backticks is what an unset or empty variable means. */
  default: string;
  /** The processes that read it (README's "Used by"). */
  usedBy: string;
  description: string;
}

/** Every variable the service reads, in README's order. */
export const CONFIG_VARIABLES = [
  {
    name: 'DATABASE_URL',
    default: 'embedded (npm start)',
    usedBy: 'api, worker, admin',
    description: 'PostgreSQL connection URL',
  },
  {
    name: 'DB_POOL_MAX',
    default: '`20`',
    usedBy: 'api, worker',
    description: 'database connections per process',
  },
  {
    name: 'TEMPORAL_ADDRESS',
    default: 'dev server (npm start)',
    usedBy: 'api, worker',
    description: 'Temporal frontend `host:port`',
  },
  {
    name: 'TEMPORAL_NAMESPACE',
    default: '`default`',
    usedBy: 'api, worker',
    description: 'Temporal namespace',
  },
  {
    name: 'TEMPORAL_TASK_QUEUE',
    default: '`audits`',
    usedBy: 'api, worker',
    description: 'task queue',
  },
  {
    name: 'PORT',
    default: '`8080`',
    usedBy: 'api',
    description: 'listening port (`0`: any free port)',
  },
  {
    name: 'HOST',
    default: '`127.0.0.1`',
    usedBy: 'api',
    description: 'listening address (`0.0.0.0` in containers)',
  },
  {
    name: 'LOG_LEVEL',
    default: '`info`',
    usedBy: 'all',
    description: 'pino level (`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`)',
  },
  {
    name: 'RATE_LIMIT_QUOTA',
    default: '`600`',
    usedBy: 'api',
    description: 'requests per window per token (per IP without one)',
  },
  {
    name: 'RATE_LIMIT_WINDOW_SECONDS',
    default: '`60`',
    usedBy: 'api',
    description: 'quota window',
  },
  {
    name: 'BODY_LIMIT_BYTES',
    default: '`1048576`',
    usedBy: 'api',
    description: 'JSON body limit (413 beyond)',
  },
  {
    name: 'AUTH_CACHE_TTL_MS',
    default: '`2000`',
    usedBy: 'api',
    description:
      'how long a verified token is cached per process (revocation elsewhere takes effect within it)',
  },
  {
    name: 'SHUTDOWN_TIMEOUT_MS',
    default: '`10000`',
    usedBy: 'api',
    description: 'grace period for in-flight requests on SIGTERM',
  },
  {
    name: 'LOCAL_REPOSITORY_WORKSPACES',
    default: '— (`demo` in npm start)',
    usedBy: 'api, worker',
    description:
      'comma-separated workspace ids or slugs (`prefix*`: every slug starting so) that may register local paths and `file:///` URLs; never inside `DATA_DIR`, `BLOB_DIR`, `WORK_DIR` or the code',
  },
  {
    name: 'REPOSITORY_SSH_WORKSPACES',
    default: '—',
    usedBy: 'api, worker',
    description:
      'JSON: workspace id or slug -> `{"known_hosts":"<file>","identity_file":"<file>"}`; only these may use ssh URLs, host keys checked strictly against that file',
  },
  {
    name: 'REPOSITORY_ALLOWED_HOSTS',
    default: '—',
    usedBy: 'api, worker',
    description:
      'comma-separated host names, IP addresses or CIDR ranges repositories may be on although internal (loopback, private, link-local...), for every workspace',
  },
  {
    name: 'DEMO_PUBLIC_READ',
    default: '`false` (`true` in npm start)',
    usedBy: 'api',
    description:
      'anyone may read (GET) the workspace with slug `demo` without a token, rate limited per IP; no other workspace',
  },
  {
    name: 'DEMO_PUBLIC_READ_QUOTA',
    default: '`60`',
    usedBy: 'api',
    description: 'requests per `RATE_LIMIT_WINDOW_SECONDS` per IP for those tokenless reads',
  },
  {
    name: 'PUBLIC_BASE_URL',
    default: '—',
    usedBy: 'api',
    description:
      'server URL written into the contract; also the OAuth issuer (`<url>/oauth`) and the MCP resource (`<url>/mcp`), and https here makes session cookies `Secure` (unset: the listening address)',
  },
  {
    name: 'TRUST_PROXY',
    default: '`false`',
    usedBy: 'api',
    description: 'trust `X-Forwarded-For` (behind a proxy)',
  },
  {
    name: 'SESSION_TTL_HOURS',
    default: '`12`',
    usedBy: 'api',
    description: 'lifetime of a member session (sign-in page, consent) before signing in again',
  },
  {
    name: 'LOGIN_RATE_LIMIT',
    default: '`10`',
    usedBy: 'api',
    description:
      'failed sign-ins per login-and-address and per address before each waits (30 s, doubling to 15 min; in memory per API process)',
  },
  {
    name: 'OAUTH_ACCESS_TOKEN_TTL_SECONDS',
    default: '`3600`',
    usedBy: 'api',
    description: 'lifetime of an MCP access token',
  },
  {
    name: 'OAUTH_REFRESH_TOKEN_TTL_DAYS',
    default: '`30`',
    usedBy: 'api',
    description: 'lifetime of a grant and its refresh tokens (rotated on each use)',
  },
  {
    name: 'OAUTH_COOKIE_KEYS',
    default: 'generated, kept in the database',
    usedBy: 'api',
    description:
      "comma-separated secrets (32+ characters each, newest first) signing the authorization server's cookies and the CSRF tokens",
  },
  {
    name: 'INTEGRATION_SECRET_KEYS',
    default: '— (integrations off)',
    usedBy: 'api, worker',
    description:
      'comma-separated keys (32+ characters each, newest first) sealing the secrets of GitHub/GitLab integrations (AES-256-GCM); keep old keys until their secrets are saved again',
  },
  {
    name: 'MIGRATE_ON_START',
    default: '`true`',
    usedBy: 'api',
    description: 'run migrations when the API starts',
  },
  {
    name: 'VALIDATE_RESPONSES',
    default: '`false` (tests: on)',
    usedBy: 'api',
    description: 'check every response against its schema',
  },
  {
    name: 'METRICS_PORT',
    default: '— (off)',
    usedBy: 'api, npm start',
    description:
      "port of the API's Prometheus `/metrics` (on `METRICS_HOST`); unset or `0`: no metrics server",
  },
  {
    name: 'WORKER_METRICS_PORT',
    default: '— (off)',
    usedBy: 'worker',
    description:
      "port of the worker's Prometheus `/metrics` (on `METRICS_HOST`); unset or `0`: none",
  },
  {
    name: 'TEMPORAL_METRICS_PORT',
    default: '— (off)',
    usedBy: 'worker',
    description:
      "port on which the Temporal SDK's own Prometheus metrics (pollers, task latencies, slots) are served (on `METRICS_HOST`); unset: not exported",
  },
  {
    name: 'METRICS_HOST',
    default: '`127.0.0.1`',
    usedBy: 'api, worker, npm start',
    description: 'address the metrics servers listen on (`0.0.0.0` in containers)',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '— (no traces)',
    usedBy: 'api, worker, npm start',
    description:
      'OpenTelemetry collector base URL (`http://host:4318`); traces go to `<it>/v1/traces` as OTLP/HTTP JSON',
  },
  {
    name: 'DATA_DIR',
    default: '`.data`',
    usedBy: 'npm start',
    description: 'embedded PostgreSQL, Temporal file, demo token',
  },
  {
    name: 'TEMPORAL_DEV_PORT',
    default: '`7233`',
    usedBy: 'npm start',
    description: 'Temporal dev server port',
  },
  {
    name: 'TEMPORAL_UI_PORT',
    default: '`8233`',
    usedBy: 'npm start',
    description: 'Temporal dev server UI port',
  },
  {
    name: 'TEMPORAL_UI_URL',
    default: '—',
    usedBy: 'npm start',
    description:
      'Temporal UI address printed at start when `TEMPORAL_ADDRESS` names an existing server',
  },
  {
    name: 'EMBEDDED_PG_PORT',
    default: 'a free port',
    usedBy: 'npm start',
    description: 'embedded PostgreSQL port',
  },
  {
    name: 'BLOB_DIR',
    default: '`$DATA_DIR/blobs`',
    usedBy: 'api, worker',
    description: 'content-addressed store of source files and uploads; shared by API and workers',
  },
  {
    name: 'WORK_DIR',
    default: '`$TMPDIR/archaudit-work`',
    usedBy: 'worker',
    description:
      'scratch folders for git fetches (`<audit>/<attempt>-<pid>-<random>`: one per attempt and process, removed by its owner)',
  },
  {
    name: 'UPLOAD_LIMIT_BYTES',
    default: '`104857600`',
    usedBy: 'api',
    description: 'largest accepted upload (413 beyond)',
  },
  {
    name: 'MAX_STORED_FILE_BYTES',
    default: '`2097152`',
    usedBy: 'worker',
    description: 'larger files are listed in the manifest but not read (a coverage gap says so)',
  },
  {
    name: 'GIT_TIMEOUT_MS',
    default: '`300000`',
    usedBy: 'worker',
    description: 'deadline for fetching one commit',
  },
  {
    name: 'AGENT_HEARTBEAT_TIMEOUT_SECONDS',
    default: '`30`',
    usedBy: 'api',
    description: "how soon a lost worker's agent attempt is retried elsewhere",
  },
  {
    name: 'AGENT_MAX_ATTEMPTS',
    default: '`4`',
    usedBy: 'api',
    description: 'attempts per agent before its stage fails',
  },
  {
    name: 'RETENTION_SWEEP_INTERVAL_MINUTES',
    default: '`60`',
    usedBy: 'worker, npm start',
    description:
      'how often the `retention-sweep` schedule removes attachments and exports past `retained_until`, prunes old audits and expired Idempotency-Keys',
  },
  {
    name: 'RETENTION_AUDIT_DAYS',
    default: '`90`',
    usedBy: 'worker',
    description:
      'finished audits older than this lose their logs, agent runs and (snapshot not kept) evidence; `0`: kept forever',
  },
  {
    name: 'RETENTION_KEEP_SNAPSHOTS',
    default: '`10`',
    usedBy: 'worker',
    description:
      "a repository's latest snapshots whose evidence is always kept, whatever their age",
  },
  {
    name: 'EXPORT_RETENTION_DAYS',
    default: '`30`',
    usedBy: 'api',
    description:
      "how long an export's file is kept when the request names no `retention_days` (1..365)",
  },
  {
    name: 'INGESTION_MAX_RECORDS',
    default: '`1000`',
    usedBy: 'api',
    description: 'records one evidence batch may hold (more: 413 `batch_too_large`)',
  },
  {
    name: 'INGESTION_MAX_BYTES',
    default: '`524288`',
    usedBy: 'api',
    description:
      'bytes of JSON one evidence batch may take, at most `BODY_LIMIT_BYTES` (more: 413 `batch_too_large`)',
  },
  {
    name: 'INGESTED_EVIDENCE_WINDOW_DAYS',
    default: '`90`',
    usedBy: 'worker',
    description:
      "an audit's reconcile reads the repository's ingested evidence observed within this many days before it",
  },
  {
    name: 'EVIDENCE_STALE_AFTER_DAYS',
    default: '`30`',
    usedBy: 'worker',
    description:
      'evidence observed longer ago than this is listed in the `stale_evidence_ids` of the assessments that use it',
  },
  {
    name: 'DEPENDENCY_OUTAGE_BOUND_SECONDS',
    default: '`600`',
    usedBy: 'worker',
    description:
      'an audit step waits this long for an unreachable database before the audit fails with `dependency_unavailable`',
  },
  {
    name: 'AUDIT_RECOVERY_INTERVAL_MINUTES',
    default: '`2`',
    usedBy: 'worker, npm start',
    description:
      'how often the `audit-recovery` schedule starts (or fails) queued audits whose workflow never started',
  },
  {
    name: 'AUDIT_START_GRACE_SECONDS',
    default: '`120`',
    usedBy: 'worker, npm start',
    description: 'how long a queued audit may wait for its workflow before the recovery sweep acts',
  },
  {
    name: 'IDEMPOTENCY_WAIT_MS',
    default: '`2000`',
    usedBy: 'api',
    description:
      'how long a request waits for another with the same Idempotency-Key before 409 `idempotency_in_progress`',
  },
  {
    name: 'IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS',
    default: '`60`',
    usedBy: 'api',
    description:
      'after this, an Idempotency-Key whose request never finished (its process died) is taken over by a retry',
  },
  {
    name: 'IDEMPOTENCY_KEY_TTL_HOURS',
    default: '`24`',
    usedBy: 'api, worker',
    description:
      'a completed Idempotency-Key replays its response this long; then the retention sweep removes it and the key is free again',
  },
  {
    name: 'SCHEDULE_MISSED_GRACE_SECONDS',
    default: '`300`',
    usedBy: 'worker',
    description:
      'a schedule occurrence older than this when dispatch becomes possible is missed (missed_run_policy applies)',
  },
  {
    name: 'SCHEDULE_MAX_FAILURES',
    default: '`3`',
    usedBy: 'worker',
    description: "failed dispatches in a row after which a schedule's state is `error`",
  },
  {
    name: 'DECISION_HISTORY_LIMIT',
    default: '`10000`',
    usedBy: 'api',
    description:
      "events in a decision workflow's history after which it continues as new (it may wait for months)",
  },
  {
    name: 'WORKFLOW_ACTION_TTL_HOURS',
    default: '`72`',
    usedBy: 'api',
    description:
      'how long a requested workflow action waits for approval before it expires (and never executes)',
  },
  {
    name: 'ANALYSIS_THREADS',
    default: 'CPUs - 1, from 1 to 4',
    usedBy: 'worker',
    description:
      "worker threads that run the analyzers and reconcile, off the worker's main thread",
  },
  {
    name: 'PROCESS_LAUNCHER',
    default: '`on`',
    usedBy: 'worker',
    description:
      '`off`: git commands are spawned by the worker itself instead of its small launcher process',
  },
  {
    name: 'WORKFLOW_BUNDLE',
    default: 'unset (bundled at start)',
    usedBy: 'worker',
    description:
      'a workflow bundle made by `npm run bundle:workflows -- <file>` (the Docker image sets it)',
  },
  {
    name: 'MODEL_BASE_URL',
    default: '—',
    usedBy: 'api, worker',
    description:
      'OpenAI-compatible chat-completions endpoint for model-backed agents (`deep_review`) and the assistant; they use it when it and `MODEL_ID` are set',
  },
  {
    name: 'MODEL_ID',
    default: '—',
    usedBy: 'api, worker',
    description:
      'the model those agents and the assistant ask (the API reserves assistant budget at its price)',
  },
  {
    name: 'MODEL_API_KEY',
    default: '—',
    usedBy: 'worker',
    description: 'bearer token sent to `MODEL_BASE_URL` (none when unset)',
  },
  {
    name: 'MODEL_MAX_TOKENS_PARAM',
    default: '`max_tokens`',
    usedBy: 'worker',
    description: '`max_completion_tokens` for OpenAI reasoning models',
  },
  {
    name: 'MODEL_PRICES',
    default: '`{}`',
    usedBy: 'api, worker',
    description:
      'JSON price table, USD per million tokens: `{"<model>":{"input":"2.50","cached_input":"1.25","output":"10.00"}}`',
  },
  {
    name: 'MAX_RUNNING_AUDITS',
    default: '`0`',
    usedBy: 'api, worker',
    description:
      'audits running at once over the whole fleet (0: no limit); more wait queued, in line, and a free slot goes first to the workspace running fewest',
  },
  {
    name: 'MAX_RUNNING_AUDITS_PER_WORKSPACE',
    default: '`0`',
    usedBy: 'api, worker',
    description: 'audits one workspace may run at once (0: no limit); its others wait queued',
  },
  {
    name: 'SHUTDOWN_GRACE_SECONDS',
    default: '`30`',
    usedBy: 'worker',
    description:
      'on SIGTERM the worker stops polling and lets running activities finish this long; those still running then fail at once and are retried elsewhere',
  },
  {
    name: 'AUDIT_MAX_FILES',
    default: '`100000`',
    usedBy: 'worker',
    description:
      'files one audit reads; past it the rest are not read, a `budget` coverage gap says so and the snapshot is `partial`',
  },
  {
    name: 'AUDIT_ANALYSIS_SECONDS',
    default: '`900`',
    usedBy: 'worker',
    description:
      "wall time of one audit's analysis (first analyzer start to the last analysis step); past it the audit fails `analysis_time_budget_exceeded`",
  },
  {
    name: 'AUDIT_MAX_EVIDENCE',
    default: '`250000`',
    usedBy: 'worker',
    description:
      'evidence records one analyzer (or reconcile over all) may produce; past it the audit fails `evidence_budget_exceeded`',
  },
  {
    name: 'AUDIT_MAX_ENTITIES',
    default: '`50000`',
    usedBy: 'worker',
    description: "entities of one audit's graph; past it the audit fails `entity_budget_exceeded`",
  },
  {
    name: 'AUDIT_MAX_OUTPUT_BYTES',
    default: '`134217728`',
    usedBy: 'worker',
    description:
      "bytes of JSON one analysis step's result may take; past it the audit fails `output_budget_exceeded`",
  },
] as const satisfies readonly ConfigVariable[];

export type ConfigVariableName = (typeof CONFIG_VARIABLES)[number]['name'];

/** The model provider of model-backed agents; the options of OpenAiCompatibleProvider. */
export interface ModelSettings {
  baseUrl: string;
  modelId: string;
  apiKey: string | null;
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** Connections per process (API and worker each have a pool). */
  dbPoolMax: number;
  temporalAddress: string | undefined;
  temporalNamespace: string;
  taskQueue: string;
  dataDir: string;
  logLevel: string;
  rateLimitQuota: number;
  rateLimitWindowSeconds: number;
  bodyLimitBytes: number;
  authCacheTtlMs: number;
  shutdownTimeoutMs: number;
  /** Workspace ids, slugs or `prefix*` slugs allowed local repository sources. */
  localRepositoryWorkspaces: string[];
  /** Workspace id, slug or `prefix*` -> the ssh access an operator gave it. */
  repositorySshWorkspaces: Record<string, SshAccess>;
  /** Hosts, addresses and CIDR ranges allowed as repository hosts although internal. */
  repositoryAllowedHosts: string[];
  /** Anyone may read the `demo` workspace without a token (GET only, rate limited per IP). */
  demoPublicRead: boolean;
  demoPublicReadQuota: number;
  validateResponses: boolean;
  /** The API's Prometheus port (null: no metrics server). */
  metricsPort: number | null;
  /** The worker's Prometheus port (null: none). */
  workerMetricsPort: number | null;
  /** The Temporal SDK's own Prometheus port in the worker (null: not exported). */
  temporalMetricsPort: number | null;
  metricsHost: string;
  /** OTLP/HTTP collector base URL; null: no tracing. */
  otlpEndpoint: string | null;
  publicBaseUrl: string | undefined;
  /** Trust `X-Forwarded-*` headers (the API runs behind a proxy). */
  trustProxy: boolean;
  sessionTtlHours: number;
  /** Sign-in attempts per 15 minutes, per login and per IP. */
  loginRateLimit: number;
  oauthAccessTokenTtlSeconds: number;
  oauthRefreshTokenTtlDays: number;
  /** Empty: keys generated on first start and kept in the database. */
  oauthCookieKeys: string[];
  /** Keys sealing integration secrets, newest first; empty: integrations are refused. */
  integrationSecretKeys: string[];
  /** The API applies pending migrations when it starts. */
  migrateOnStart: boolean;
  /** Content-addressed store of source files and uploads (shared by API and workers). */
  blobDir: string;
  /** Scratch space for git fetches; each attempt gets its own folder, removed by it afterwards. */
  workDir: string;
  uploadLimitBytes: number;
  /** Files larger than this are listed in the manifest but their content is not kept. */
  maxStoredFileBytes: number;
  gitTimeoutMs: number;
  agentHeartbeatTimeoutSeconds: number;
  agentMaxAttempts: number;
  /** How often the `retention-sweep` schedule removes expired attachments. */
  retentionSweepIntervalMinutes: number;
  /** Finished audits older than this lose logs, agent runs and unkept evidence (0: never). */
  retentionAuditDays: number;
  /** A repository's latest snapshots kept whole whatever their age. */
  retentionKeepSnapshots: number;
  /** Days an export's file is kept when the request names none. */
  exportRetentionDays: number;
  /** Records and JSON bytes one evidence batch may hold. */
  ingestionMaxRecords: number;
  ingestionMaxBytes: number;
  /** Days before an audit within which ingested evidence is reconciled by it. */
  ingestedEvidenceWindowDays: number;
  /** Evidence older than this (days) is stale in the assessments that use it. */
  evidenceStaleAfterDays: number;
  /** How long an audit step waits for an unreachable database before it fails. */
  dependencyOutageBoundSeconds: number;
  /** How often the `audit-recovery` schedule looks for queued audits without a workflow. */
  auditRecoveryIntervalMinutes: number;
  /** Per-audit analysis budgets (domain/audits/budgets.ts). */
  auditBudgets: AuditBudgets;
  /** A queued audit older than this without a workflow is started (or failed) by the sweep. */
  auditStartGraceSeconds: number;
  /** How long a request waits on another with the same Idempotency-Key before 409. */
  idempotencyWaitMs: number;
  /** An unfinished Idempotency-Key claim older than this is taken over by a retry. */
  idempotencyClaimTimeoutSeconds: number;
  /** A completed Idempotency-Key is removed (and free again) after this. */
  idempotencyKeyTtlHours: number;
  /** A schedule occurrence older than this when dispatch becomes possible counts as missed. */
  scheduleMissedGraceSeconds: number;
  /** Consecutive failed dispatches after which a schedule's state becomes `error`. */
  scheduleMaxFailures: number;
  /** Events in a decision workflow's history after which it continues as new. */
  decisionHistoryLimit: number;
  /** How long a workflow action waits for approval before it expires (seconds; env in hours). */
  workflowActionTtlSeconds: number;
  /** Admission: audits running at once in all and per workspace (null: no limit). */
  maxRunningAudits: number | null;
  maxRunningAuditsPerWorkspace: number | null;
  /** On SIGTERM, how long running activities may finish before they are cut off (retried). */
  shutdownGraceSeconds: number;
  /** A pre-built workflow bundle (npm run bundle:workflows); unset: bundled at worker start. */
  workflowBundlePath: string | undefined;
  /**
   * Checked here so that a bad value stops the process at start; the pool and the launcher,
   * which no Config reaches, read them with analysisThreads() and processLauncherOn().
   */
  analysisThreads: number;
  processLauncher: boolean;
  /** Null: no provider, model-backed agents are skipped. */
  model: ModelSettings | null;
  modelPrices: Record<string, ModelPrice>;
  /** npm start: the embedded PostgreSQL's port (unset: a free one). */
  embeddedPgPort: number | undefined;
  /** npm start: the Temporal dev server's ports. */
  temporalDevPort: number;
  temporalUiPort: number;
  /** npm start: the Temporal UI to print when TEMPORAL_ADDRESS names an existing server. */
  temporalUiUrl: string | undefined;
}

/** Whether audits wait for admission (a limit of running audits is set). */
export function admissionOn(
  config: Pick<Config, 'maxRunningAudits' | 'maxRunningAuditsPerWorkspace'>,
): boolean {
  return config.maxRunningAudits !== null || config.maxRunningAuditsPerWorkspace !== null;
}

/** The value of `name`; unset and empty are the same (a compose file's `X: ${X:-}` is empty). */
function raw(env: NodeJS.ProcessEnv, name: ConfigVariableName): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function int(
  env: NodeJS.ProcessEnv,
  name: ConfigVariableName,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be an integer ${range}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: ConfigVariableName, fallback: boolean): boolean {
  const text = raw(env, name);
  if (text === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new Error(`${name} must be true or false (or on/off), got ${JSON.stringify(text)}`);
}

function oneOf<T extends string>(
  env: NodeJS.ProcessEnv,
  name: ConfigVariableName,
  values: readonly T[],
  fallback: T,
): T {
  const text = raw(env, name)?.trim();
  if (!text) return fallback;
  if (!(values as readonly string[]).includes(text)) {
    throw new Error(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(text)}`);
  }
  return text as T;
}

/** A port, or null when unset or 0 (the feature it serves is off). */
function optionalPort(env: NodeJS.ProcessEnv, name: ConfigVariableName): number | null {
  return int(env, name, 0, 0, PORT_MAX) || null;
}

/** A comma-separated list, entries trimmed, empty ones dropped. */
function list(env: NodeJS.ProcessEnv, name: ConfigVariableName): string[] {
  return (raw(env, name) ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
}

function allowedHosts(env: NodeJS.ProcessEnv): string[] {
  const entries = list(env, 'REPOSITORY_ALLOWED_HOSTS');
  for (const entry of entries) {
    const problem = allowListEntryProblem(entry);
    if (problem) throw new Error(`REPOSITORY_ALLOWED_HOSTS: ${JSON.stringify(entry)} ${problem}`);
  }
  return entries;
}

function sshWorkspaces(env: NodeJS.ProcessEnv): Record<string, SshAccess> {
  const text = raw(env, 'REPOSITORY_SSH_WORKSPACES');
  if (text === undefined) return {};
  const fail = (why: string): never => {
    throw new Error(`REPOSITORY_SSH_WORKSPACES ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail('must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    fail('must be a JSON object');
  const out: Record<string, SshAccess> = {};
  for (const [workspace, value] of Object.entries(parsed as Record<string, unknown>)) {
    const v = (value ?? {}) as Record<string, unknown>;
    const knownHosts = v.known_hosts;
    const identity = v.identity_file ?? null;
    const extra = Object.keys(v).filter((k) => k !== 'known_hosts' && k !== 'identity_file');
    if (typeof value !== 'object' || extra.length > 0)
      fail(`.${workspace} must be {"known_hosts": "<file>", "identity_file": "<file>"}`);
    if (typeof knownHosts !== 'string' || !path.isAbsolute(knownHosts))
      fail(`.${workspace}.known_hosts must be an absolute path`);
    if (identity !== null && (typeof identity !== 'string' || !path.isAbsolute(identity)))
      fail(`.${workspace}.identity_file must be an absolute path`);
    out[workspace] = {
      knownHostsFile: knownHosts as string,
      identityFile: identity as string | null,
    };
  }
  return out;
}

function cookieKeys(
  env: NodeJS.ProcessEnv,
  name: 'OAUTH_COOKIE_KEYS' | 'INTEGRATION_SECRET_KEYS' = 'OAUTH_COOKIE_KEYS',
): string[] {
  const keys = list(env, name);
  if (keys.some((k) => k.length < 32))
    throw new Error(`${name}: each key must be at least 32 characters`);
  return keys;
}

const PORT_MAX = 65535;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

function modelSettings(env: NodeJS.ProcessEnv): ModelSettings | null {
  const maxTokensParam = oneOf(
    env,
    'MODEL_MAX_TOKENS_PARAM',
    ['max_tokens', 'max_completion_tokens'],
    'max_tokens',
  );
  const baseUrl = raw(env, 'MODEL_BASE_URL')?.trim();
  const modelId = raw(env, 'MODEL_ID')?.trim();
  const apiKey = raw(env, 'MODEL_API_KEY')?.trim() || null;
  if (!baseUrl || !modelId) return null;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new Error(`MODEL_BASE_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  return { baseUrl, modelId, apiKey, maxTokensParam };
}

/** Threads of the analysis pool (analysis/pool.ts). */
export function analysisThreads(env: NodeJS.ProcessEnv = process.env): number {
  return int(env, 'ANALYSIS_THREADS', Math.min(4, Math.max(1, os.availableParallelism() - 1)), 1);
}

/** Whether git commands are started by the launcher process (process-launcher.ts). */
export function processLauncherOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return bool(env, 'PROCESS_LAUNCHER', true);
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = raw(env, 'DATA_DIR') ?? '.data';
  return {
    port: int(env, 'PORT', 8080, 0, PORT_MAX),
    host: raw(env, 'HOST') ?? '127.0.0.1',
    databaseUrl: raw(env, 'DATABASE_URL'),
    dbPoolMax: int(env, 'DB_POOL_MAX', 20, 1),
    temporalAddress: raw(env, 'TEMPORAL_ADDRESS'),
    temporalNamespace: raw(env, 'TEMPORAL_NAMESPACE') ?? 'default',
    taskQueue: raw(env, 'TEMPORAL_TASK_QUEUE') ?? 'audits',
    dataDir: path.resolve(dataDir),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    rateLimitQuota: int(env, 'RATE_LIMIT_QUOTA', 600, 1),
    rateLimitWindowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1),
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 2000, 0),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0),
    localRepositoryWorkspaces: list(env, 'LOCAL_REPOSITORY_WORKSPACES'),
    repositorySshWorkspaces: sshWorkspaces(env),
    repositoryAllowedHosts: allowedHosts(env),
    demoPublicRead: bool(env, 'DEMO_PUBLIC_READ', false),
    demoPublicReadQuota: int(env, 'DEMO_PUBLIC_READ_QUOTA', 60, 1),
    validateResponses: bool(env, 'VALIDATE_RESPONSES', false),
    metricsPort: optionalPort(env, 'METRICS_PORT'),
    workerMetricsPort: optionalPort(env, 'WORKER_METRICS_PORT'),
    temporalMetricsPort: optionalPort(env, 'TEMPORAL_METRICS_PORT'),
    metricsHost: raw(env, 'METRICS_HOST') ?? '127.0.0.1',
    otlpEndpoint: raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')?.replace(/\/+$/, '') ?? null,
    publicBaseUrl: raw(env, 'PUBLIC_BASE_URL'),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    sessionTtlHours: int(env, 'SESSION_TTL_HOURS', 12, 1, 24 * 30),
    loginRateLimit: int(env, 'LOGIN_RATE_LIMIT', 10, 1),
    oauthAccessTokenTtlSeconds: int(env, 'OAUTH_ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 86_400),
    oauthRefreshTokenTtlDays: int(env, 'OAUTH_REFRESH_TOKEN_TTL_DAYS', 30, 1, 366),
    oauthCookieKeys: cookieKeys(env),
    integrationSecretKeys: cookieKeys(env, 'INTEGRATION_SECRET_KEYS'),
    migrateOnStart: bool(env, 'MIGRATE_ON_START', true),
    blobDir: path.resolve(raw(env, 'BLOB_DIR') ?? path.join(dataDir, 'blobs')),
    workDir: path.resolve(raw(env, 'WORK_DIR') ?? path.join(os.tmpdir(), 'archaudit-work')),
    uploadLimitBytes: int(env, 'UPLOAD_LIMIT_BYTES', 100 * 1024 * 1024, 1),
    maxStoredFileBytes: int(env, 'MAX_STORED_FILE_BYTES', 2 * 1024 * 1024, 1),
    gitTimeoutMs: int(env, 'GIT_TIMEOUT_MS', 300_000, 1000),
    agentHeartbeatTimeoutSeconds: int(env, 'AGENT_HEARTBEAT_TIMEOUT_SECONDS', 30, 1),
    agentMaxAttempts: int(env, 'AGENT_MAX_ATTEMPTS', 4, 1),
    retentionSweepIntervalMinutes: int(env, 'RETENTION_SWEEP_INTERVAL_MINUTES', 60, 1),
    retentionAuditDays: int(env, 'RETENTION_AUDIT_DAYS', 90, 0),
    retentionKeepSnapshots: int(env, 'RETENTION_KEEP_SNAPSHOTS', 10, 1),
    exportRetentionDays: int(env, 'EXPORT_RETENTION_DAYS', 30, 1, 365),
    ingestionMaxRecords: int(env, 'INGESTION_MAX_RECORDS', 1000, 1),
    ingestionMaxBytes: int(env, 'INGESTION_MAX_BYTES', 512 * 1024, 1),
    ingestedEvidenceWindowDays: int(env, 'INGESTED_EVIDENCE_WINDOW_DAYS', 90, 1),
    evidenceStaleAfterDays: int(env, 'EVIDENCE_STALE_AFTER_DAYS', 30, 1),
    dependencyOutageBoundSeconds: int(env, 'DEPENDENCY_OUTAGE_BOUND_SECONDS', 600, 1),
    auditRecoveryIntervalMinutes: int(env, 'AUDIT_RECOVERY_INTERVAL_MINUTES', 2, 1),
    auditBudgets: {
      maxFiles: int(env, 'AUDIT_MAX_FILES', 100_000, 1),
      analysisSeconds: int(env, 'AUDIT_ANALYSIS_SECONDS', 900, 1),
      maxEvidence: int(env, 'AUDIT_MAX_EVIDENCE', 250_000, 1),
      maxEntities: int(env, 'AUDIT_MAX_ENTITIES', 50_000, 1),
      maxOutputBytes: int(env, 'AUDIT_MAX_OUTPUT_BYTES', 128 * 1024 * 1024, 1),
    },
    auditStartGraceSeconds: int(env, 'AUDIT_START_GRACE_SECONDS', 120, 0),
    idempotencyWaitMs: int(env, 'IDEMPOTENCY_WAIT_MS', 2000, 0),
    idempotencyClaimTimeoutSeconds: int(env, 'IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS', 60, 1),
    idempotencyKeyTtlHours: int(env, 'IDEMPOTENCY_KEY_TTL_HOURS', 24, 1),
    scheduleMissedGraceSeconds: int(env, 'SCHEDULE_MISSED_GRACE_SECONDS', 300, 0),
    scheduleMaxFailures: int(env, 'SCHEDULE_MAX_FAILURES', 3, 1),
    decisionHistoryLimit: int(env, 'DECISION_HISTORY_LIMIT', 10_000, 100),
    workflowActionTtlSeconds: int(env, 'WORKFLOW_ACTION_TTL_HOURS', 72, 1, 24 * 366) * 3600,
    workflowBundlePath: raw(env, 'WORKFLOW_BUNDLE'),
    analysisThreads: analysisThreads(env),
    processLauncher: processLauncherOn(env),
    shutdownGraceSeconds: int(env, 'SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
    maxRunningAudits: int(env, 'MAX_RUNNING_AUDITS', 0, 0, 100_000) || null,
    maxRunningAuditsPerWorkspace:
      int(env, 'MAX_RUNNING_AUDITS_PER_WORKSPACE', 0, 0, 100_000) || null,
    model: modelSettings(env),
    modelPrices: parsePriceTable(raw(env, 'MODEL_PRICES')),
    // 0 asks for a free port, as unset does.
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 0, 0, PORT_MAX) || undefined,
    temporalDevPort: int(env, 'TEMPORAL_DEV_PORT', 7233, 1, PORT_MAX),
    temporalUiPort: int(env, 'TEMPORAL_UI_PORT', 8233, 1, PORT_MAX),
    temporalUiUrl: raw(env, 'TEMPORAL_UI_URL'),
  };
}

/**
 * `npm start`'s configuration: as loadConfig, but the demo workspace may use local repositories
 * (its demo repository is a folder of this machine) and anyone may read it, unless the
 * variables say otherwise.
 */
export function loadStartConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig({ LOCAL_REPOSITORY_WORKSPACES: 'demo', DEMO_PUBLIC_READ: 'true', ...env });
}
