/**
 * Every setting comes from the environment (twelve-factor); this is the one place that reads it.
 * platform/config-settings.ts declares each variable (kind, default, bounds, README's row) and
 * readSettings reads them all; loadConfig arranges the values into the Config the processes use.
 */
import os from 'node:os';
import path from 'node:path';
import type { AuditBudgets } from '../domain/audits/budgets';
import type { ModelPrice } from '../domain/audits/pricing';
import type { SshAccess } from '../domain/repositories/source-policy';
import { SETTINGS, type ConfigVariableName, type SettingValues } from './config-settings';

export { CONFIG_VARIABLES, type ConfigVariable, type ConfigVariableName } from './config-settings';

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
   * which no Config reaches, read them with analysisThreads(), analysisNice() and processLauncherOn().
   */
  analysisThreads: number;
  analysisNice: number;
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
function readSetting<K extends ConfigVariableName>(
  env: NodeJS.ProcessEnv,
  name: K,
): SettingValues[K] {
  const value = env[name];
  const text = value === undefined || value === '' ? undefined : value;
  return SETTINGS[name].read(text, name) as SettingValues[K];
}

/** Every variable of the table, read in its order (the first bad value throws). */
function readSettings(env: NodeJS.ProcessEnv): SettingValues {
  const values: Partial<Record<ConfigVariableName, unknown>> = {};
  for (const name of Object.keys(SETTINGS) as ConfigVariableName[])
    values[name] = readSetting(env, name);
  return values as SettingValues;
}

function modelSettings(v: SettingValues): ModelSettings | null {
  const baseUrl = v.MODEL_BASE_URL?.trim();
  const modelId = v.MODEL_ID?.trim();
  if (!baseUrl || !modelId) return null;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new Error(`MODEL_BASE_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  const apiKey = v.MODEL_API_KEY?.trim() || null;
  return { baseUrl, modelId, apiKey, maxTokensParam: v.MODEL_MAX_TOKENS_PARAM };
}

/** Threads of the analysis pool (analysis/pool.ts). */
export function analysisThreads(env: NodeJS.ProcessEnv = process.env): number {
  return readSetting(env, 'ANALYSIS_THREADS');
}

/** The nice increment of the analysis pool's main-lane threads (analysis/pool.ts). */
export function analysisNice(env: NodeJS.ProcessEnv = process.env): number {
  return readSetting(env, 'ANALYSIS_NICE');
}

/** Whether git commands are started by the launcher process (process-launcher.ts). */
export function processLauncherOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return readSetting(env, 'PROCESS_LAUNCHER');
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const v = readSettings(env);
  return {
    port: v.PORT,
    host: v.HOST,
    databaseUrl: v.DATABASE_URL,
    dbPoolMax: v.DB_POOL_MAX,
    temporalAddress: v.TEMPORAL_ADDRESS,
    temporalNamespace: v.TEMPORAL_NAMESPACE,
    taskQueue: v.TEMPORAL_TASK_QUEUE,
    dataDir: path.resolve(v.DATA_DIR),
    logLevel: v.LOG_LEVEL,
    rateLimitQuota: v.RATE_LIMIT_QUOTA,
    rateLimitWindowSeconds: v.RATE_LIMIT_WINDOW_SECONDS,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    authCacheTtlMs: v.AUTH_CACHE_TTL_MS,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    localRepositoryWorkspaces: v.LOCAL_REPOSITORY_WORKSPACES,
    repositorySshWorkspaces: v.REPOSITORY_SSH_WORKSPACES,
    repositoryAllowedHosts: v.REPOSITORY_ALLOWED_HOSTS,
    demoPublicRead: v.DEMO_PUBLIC_READ,
    demoPublicReadQuota: v.DEMO_PUBLIC_READ_QUOTA,
    validateResponses: v.VALIDATE_RESPONSES,
    metricsPort: v.METRICS_PORT,
    workerMetricsPort: v.WORKER_METRICS_PORT,
    temporalMetricsPort: v.TEMPORAL_METRICS_PORT,
    metricsHost: v.METRICS_HOST,
    otlpEndpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    trustProxy: v.TRUST_PROXY,
    sessionTtlHours: v.SESSION_TTL_HOURS,
    loginRateLimit: v.LOGIN_RATE_LIMIT,
    oauthAccessTokenTtlSeconds: v.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    oauthRefreshTokenTtlDays: v.OAUTH_REFRESH_TOKEN_TTL_DAYS,
    oauthCookieKeys: v.OAUTH_COOKIE_KEYS,
    integrationSecretKeys: v.INTEGRATION_SECRET_KEYS,
    migrateOnStart: v.MIGRATE_ON_START,
    blobDir: path.resolve(v.BLOB_DIR ?? path.join(v.DATA_DIR, 'blobs')),
    workDir: path.resolve(v.WORK_DIR ?? path.join(os.tmpdir(), 'archaudit-work')),
    uploadLimitBytes: v.UPLOAD_LIMIT_BYTES,
    maxStoredFileBytes: v.MAX_STORED_FILE_BYTES,
    gitTimeoutMs: v.GIT_TIMEOUT_MS,
    agentHeartbeatTimeoutSeconds: v.AGENT_HEARTBEAT_TIMEOUT_SECONDS,
    agentMaxAttempts: v.AGENT_MAX_ATTEMPTS,
    retentionSweepIntervalMinutes: v.RETENTION_SWEEP_INTERVAL_MINUTES,
    retentionAuditDays: v.RETENTION_AUDIT_DAYS,
    retentionKeepSnapshots: v.RETENTION_KEEP_SNAPSHOTS,
    exportRetentionDays: v.EXPORT_RETENTION_DAYS,
    ingestionMaxRecords: v.INGESTION_MAX_RECORDS,
    ingestionMaxBytes: v.INGESTION_MAX_BYTES,
    ingestedEvidenceWindowDays: v.INGESTED_EVIDENCE_WINDOW_DAYS,
    evidenceStaleAfterDays: v.EVIDENCE_STALE_AFTER_DAYS,
    dependencyOutageBoundSeconds: v.DEPENDENCY_OUTAGE_BOUND_SECONDS,
    auditRecoveryIntervalMinutes: v.AUDIT_RECOVERY_INTERVAL_MINUTES,
    auditBudgets: {
      maxFiles: v.AUDIT_MAX_FILES,
      analysisSeconds: v.AUDIT_ANALYSIS_SECONDS,
      maxEvidence: v.AUDIT_MAX_EVIDENCE,
      maxEntities: v.AUDIT_MAX_ENTITIES,
      maxOutputBytes: v.AUDIT_MAX_OUTPUT_BYTES,
    },
    auditStartGraceSeconds: v.AUDIT_START_GRACE_SECONDS,
    idempotencyWaitMs: v.IDEMPOTENCY_WAIT_MS,
    idempotencyClaimTimeoutSeconds: v.IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS,
    idempotencyKeyTtlHours: v.IDEMPOTENCY_KEY_TTL_HOURS,
    scheduleMissedGraceSeconds: v.SCHEDULE_MISSED_GRACE_SECONDS,
    scheduleMaxFailures: v.SCHEDULE_MAX_FAILURES,
    decisionHistoryLimit: v.DECISION_HISTORY_LIMIT,
    workflowActionTtlSeconds: v.WORKFLOW_ACTION_TTL_HOURS * 3600,
    workflowBundlePath: v.WORKFLOW_BUNDLE,
    analysisThreads: v.ANALYSIS_THREADS,
    analysisNice: v.ANALYSIS_NICE,
    processLauncher: v.PROCESS_LAUNCHER,
    shutdownGraceSeconds: v.SHUTDOWN_GRACE_SECONDS,
    maxRunningAudits: v.MAX_RUNNING_AUDITS,
    maxRunningAuditsPerWorkspace: v.MAX_RUNNING_AUDITS_PER_WORKSPACE,
    model: modelSettings(v),
    modelPrices: v.MODEL_PRICES,
    // 0 asks for a free port, as unset does.
    embeddedPgPort: v.EMBEDDED_PG_PORT ?? undefined,
    temporalDevPort: v.TEMPORAL_DEV_PORT,
    temporalUiPort: v.TEMPORAL_UI_PORT,
    temporalUiUrl: v.TEMPORAL_UI_URL,
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
