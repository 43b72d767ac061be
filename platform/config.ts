/**
 * Every setting comes from the environment (twelve-factor); this is the one place that reads it.
 * README's configuration table documents each variable.
 */
import os from 'node:os';
import path from 'node:path';

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
  allowLocalRepositories: boolean;
  validateResponses: boolean;
  publicBaseUrl: string | undefined;
  /** Content-addressed store of source files and uploads (shared by API and workers). */
  blobDir: string;
  /** Scratch space for git fetches; each audit gets its own folder, removed afterwards. */
  workDir: string;
  uploadLimitBytes: number;
  /** Files larger than this are listed in the manifest but their content is not kept. */
  maxStoredFileBytes: number;
  gitTimeoutMs: number;
  agentHeartbeatTimeoutSeconds: number;
  agentMaxAttempts: number;
  /** How often the `retention-sweep` schedule removes expired attachments. */
  retentionSweepIntervalMinutes: number;
  /** A schedule occurrence older than this when dispatch becomes possible counts as missed. */
  scheduleMissedGraceSeconds: number;
  /** Consecutive failed dispatches after which a schedule's state becomes `error`. */
  scheduleMaxFailures: number;
  /** Events in a decision workflow's history after which it continues as new. */
  decisionHistoryLimit: number;
  /** A pre-built workflow bundle (npm run bundle:workflows); unset: bundled at worker start. */
  workflowBundlePath: string | undefined;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(raw)}`);
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: int(env, 'PORT', 8080),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dbPoolMax: int(env, 'DB_POOL_MAX', 20, 1),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'audits',
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    logLevel: env.LOG_LEVEL || 'info',
    rateLimitQuota: int(env, 'RATE_LIMIT_QUOTA', 600, 1),
    rateLimitWindowSeconds: int(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1),
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 2000, 0),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0),
    allowLocalRepositories: bool(env, 'ALLOW_LOCAL_REPOSITORIES', false),
    validateResponses: bool(env, 'VALIDATE_RESPONSES', false),
    publicBaseUrl: env.PUBLIC_BASE_URL || undefined,
    blobDir: path.resolve(env.BLOB_DIR || path.join(env.DATA_DIR || '.data', 'blobs')),
    workDir: path.resolve(env.WORK_DIR || path.join(os.tmpdir(), 'archaudit-work')),
    uploadLimitBytes: int(env, 'UPLOAD_LIMIT_BYTES', 100 * 1024 * 1024, 1),
    maxStoredFileBytes: int(env, 'MAX_STORED_FILE_BYTES', 2 * 1024 * 1024, 1),
    gitTimeoutMs: int(env, 'GIT_TIMEOUT_MS', 300_000, 1000),
    agentHeartbeatTimeoutSeconds: int(env, 'AGENT_HEARTBEAT_TIMEOUT_SECONDS', 30, 1),
    agentMaxAttempts: int(env, 'AGENT_MAX_ATTEMPTS', 4, 1),
    retentionSweepIntervalMinutes: int(env, 'RETENTION_SWEEP_INTERVAL_MINUTES', 60, 1),
    scheduleMissedGraceSeconds: int(env, 'SCHEDULE_MISSED_GRACE_SECONDS', 300, 0),
    scheduleMaxFailures: int(env, 'SCHEDULE_MAX_FAILURES', 3, 1),
    decisionHistoryLimit: int(env, 'DECISION_HISTORY_LIMIT', 10_000, 100),
    workflowBundlePath: env.WORKFLOW_BUNDLE || undefined,
  };
}
