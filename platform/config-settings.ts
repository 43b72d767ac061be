/**
 * Every configuration variable in one table, in README's order: its kind, default and bounds
 * (platform/config-kinds.ts) and README's row (default shown, the processes that read it,
 * meaning). platform/config.ts reads the environment through it; README's configuration table has
 * exactly its rows (test/config.test.ts compares them).
 */
import os from 'node:os';
import { parsePriceTable } from '../domain/audits/pricing';
import {
  PORT_MAX,
  choice,
  cookieKeys,
  flag,
  hostEntries,
  integer,
  integerOrOff,
  list,
  parsed,
  sshWorkspaces,
  text,
  type Kind,
} from './config-kinds';

export interface ConfigVariable {
  name: string;
  /** As README shows it; a leading `value` in backticks is what an unset or empty variable means. */
  default: string;
  /** The processes that read it (README's "Used by"). */
  usedBy: string;
  description: string;
}

interface Setting<T> extends Kind<T> {
  usedBy: string;
  description: string;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const MAX_TOKENS_PARAMS = ['max_tokens', 'max_completion_tokens'] as const;

/** Every variable the service reads, in README's order. */
export const SETTINGS = {
  DATABASE_URL: {
    ...text(),
    default: 'embedded (npm start)',
    usedBy: 'api, worker, admin',
    description: 'PostgreSQL connection URL',
  },
  DB_POOL_MAX: {
    ...integer(20, 1),
    usedBy: 'api, worker',
    description: 'database connections per process',
  },
  TEMPORAL_ADDRESS: {
    ...text(),
    default: 'dev server (npm start)',
    usedBy: 'api, worker',
    description: 'Temporal frontend `host:port`',
  },
  TEMPORAL_NAMESPACE: {
    ...text('default'),
    usedBy: 'api, worker',
    description: 'Temporal namespace',
  },
  TEMPORAL_TASK_QUEUE: {
    ...text('audits'),
    usedBy: 'api, worker',
    description: 'task queue',
  },
  PORT: {
    ...integer(8080, 0, PORT_MAX),
    usedBy: 'api',
    description: 'listening port (`0`: any free port)',
  },
  HOST: {
    ...text('127.0.0.1'),
    usedBy: 'api',
    description: 'listening address (`0.0.0.0` in containers)',
  },
  LOG_LEVEL: {
    ...choice(LOG_LEVELS, 'info'),
    usedBy: 'all',
    description: 'pino level (`trace`, `debug`, `info`, `warn`, `error`, `fatal`, `silent`)',
  },
  RATE_LIMIT_QUOTA: {
    ...integer(600, 1),
    usedBy: 'api',
    description: 'requests per window per token (per IP without one)',
  },
  RATE_LIMIT_WINDOW_SECONDS: {
    ...integer(60, 1),
    usedBy: 'api',
    description: 'quota window',
  },
  BODY_LIMIT_BYTES: {
    ...integer(1024 * 1024, 1),
    usedBy: 'api',
    description: 'JSON body limit (413 beyond)',
  },
  AUTH_CACHE_TTL_MS: {
    ...integer(2000, 0),
    usedBy: 'api',
    description:
      'how long a verified token is cached per process (revocation elsewhere takes effect within it)',
  },
  SHUTDOWN_TIMEOUT_MS: {
    ...integer(10_000, 0),
    usedBy: 'api',
    description: 'grace period for in-flight requests on SIGTERM',
  },
  LOCAL_REPOSITORY_WORKSPACES: {
    ...list(),
    default: '— (`demo` in npm start)',
    usedBy: 'api, worker',
    description:
      'comma-separated workspace ids or slugs (`prefix*`: every slug starting so) that may register local paths and `file:///` URLs; never inside `DATA_DIR`, `BLOB_DIR`, `WORK_DIR` or the code',
  },
  REPOSITORY_SSH_WORKSPACES: {
    ...parsed(sshWorkspaces),
    usedBy: 'api, worker',
    description:
      'JSON: workspace id or slug -> `{"known_hosts":"<file>","identity_file":"<file>"}`; only these may use ssh URLs, host keys checked strictly against that file',
  },
  REPOSITORY_ALLOWED_HOSTS: {
    ...list(hostEntries),
    usedBy: 'api, worker',
    description:
      'comma-separated host names, IP addresses or CIDR ranges repositories may be on although internal (loopback, private, link-local...), for every workspace',
  },
  DEMO_PUBLIC_READ: {
    ...flag(false),
    default: '`false` (`true` in npm start)',
    usedBy: 'api',
    description:
      'anyone may read (GET) the workspace with slug `demo` without a token, rate limited per IP; no other workspace',
  },
  DEMO_PUBLIC_READ_QUOTA: {
    ...integer(60, 1),
    usedBy: 'api',
    description: 'requests per `RATE_LIMIT_WINDOW_SECONDS` per IP for those tokenless reads',
  },
  PUBLIC_BASE_URL: {
    ...text(),
    usedBy: 'api',
    description:
      'server URL written into the contract; also the OAuth issuer (`<url>/oauth`) and the MCP resource (`<url>/mcp`), and https here makes session cookies `Secure` (unset: the listening address)',
  },
  TRUST_PROXY: {
    ...flag(false),
    usedBy: 'api',
    description: 'trust `X-Forwarded-For` (behind a proxy)',
  },
  SESSION_TTL_HOURS: {
    ...integer(12, 1, 24 * 30),
    usedBy: 'api',
    description: 'lifetime of a member session (sign-in page, consent) before signing in again',
  },
  LOGIN_RATE_LIMIT: {
    ...integer(10, 1),
    usedBy: 'api',
    description:
      'failed sign-ins per login-and-address and per address before each waits (30 s, doubling to 15 min; in memory per API process)',
  },
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: {
    ...integer(3600, 60, 86_400),
    usedBy: 'api',
    description: 'lifetime of an MCP access token',
  },
  OAUTH_REFRESH_TOKEN_TTL_DAYS: {
    ...integer(30, 1, 366),
    usedBy: 'api',
    description: 'lifetime of a grant and its refresh tokens (rotated on each use)',
  },
  OAUTH_COOKIE_KEYS: {
    ...list(cookieKeys),
    default: 'generated, kept in the database',
    usedBy: 'api',
    description:
      "comma-separated secrets (32+ characters each, newest first) signing the authorization server's cookies and the CSRF tokens",
  },
  INTEGRATION_SECRET_KEYS: {
    ...list(cookieKeys),
    default: '— (integrations off)',
    usedBy: 'api, worker',
    description:
      'comma-separated keys (32+ characters each, newest first) sealing the secrets of GitHub/GitLab integrations (AES-256-GCM); keep old keys until their secrets are saved again',
  },
  MIGRATE_ON_START: {
    ...flag(true),
    usedBy: 'api',
    description: 'run migrations when the API starts',
  },
  VALIDATE_RESPONSES: {
    ...flag(false),
    default: '`false` (tests: on)',
    usedBy: 'api',
    description: 'check every response against its schema',
  },
  METRICS_PORT: {
    ...integerOrOff(PORT_MAX),
    usedBy: 'api, npm start',
    description:
      "port of the API's Prometheus `/metrics` (on `METRICS_HOST`); unset or `0`: no metrics server",
  },
  WORKER_METRICS_PORT: {
    ...integerOrOff(PORT_MAX),
    usedBy: 'worker',
    description:
      "port of the worker's Prometheus `/metrics` (on `METRICS_HOST`); unset or `0`: none",
  },
  TEMPORAL_METRICS_PORT: {
    ...integerOrOff(PORT_MAX),
    usedBy: 'worker',
    description:
      "port on which the Temporal SDK's own Prometheus metrics (pollers, task latencies, slots) are served (on `METRICS_HOST`); unset: not exported",
  },
  METRICS_HOST: {
    ...text('127.0.0.1'),
    usedBy: 'api, worker, npm start',
    description: 'address the metrics servers listen on (`0.0.0.0` in containers)',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    ...parsed((t) => t?.replace(/\/+$/, '') ?? null),
    default: '— (no traces)',
    usedBy: 'api, worker, npm start',
    description:
      'OpenTelemetry collector base URL (`http://host:4318`); traces go to `<it>/v1/traces` as OTLP/HTTP JSON',
  },
  DATA_DIR: {
    ...text('.data'),
    usedBy: 'npm start',
    description: 'embedded PostgreSQL, Temporal file, demo token',
  },
  TEMPORAL_DEV_PORT: {
    ...integer(7233, 1, PORT_MAX),
    usedBy: 'npm start',
    description: 'Temporal dev server port',
  },
  TEMPORAL_UI_PORT: {
    ...integer(8233, 1, PORT_MAX),
    usedBy: 'npm start',
    description: 'Temporal dev server UI port',
  },
  TEMPORAL_UI_URL: {
    ...text(),
    usedBy: 'npm start',
    description:
      'Temporal UI address printed at start when `TEMPORAL_ADDRESS` names an existing server',
  },
  EMBEDDED_PG_PORT: {
    ...integerOrOff(PORT_MAX),
    default: 'a free port',
    usedBy: 'npm start',
    description: 'embedded PostgreSQL port',
  },
  BLOB_DIR: {
    ...text(),
    default: '`$DATA_DIR/blobs`',
    usedBy: 'api, worker',
    description: 'content-addressed store of source files and uploads; shared by API and workers',
  },
  WORK_DIR: {
    ...text(),
    default: '`$TMPDIR/archaudit-work`',
    usedBy: 'worker',
    description:
      'scratch folders for git fetches (`<audit>/<attempt>-<pid>-<random>`: one per attempt and process, removed by its owner)',
  },
  UPLOAD_LIMIT_BYTES: {
    ...integer(100 * 1024 * 1024, 1),
    usedBy: 'api',
    description: 'largest accepted upload (413 beyond)',
  },
  MAX_STORED_FILE_BYTES: {
    ...integer(2 * 1024 * 1024, 1),
    usedBy: 'worker',
    description: 'larger files are listed in the manifest but not read (a coverage gap says so)',
  },
  GIT_TIMEOUT_MS: {
    ...integer(300_000, 1000),
    usedBy: 'worker',
    description: 'deadline for fetching one commit',
  },
  AGENT_HEARTBEAT_TIMEOUT_SECONDS: {
    ...integer(30, 1),
    usedBy: 'api',
    description: "how soon a lost worker's agent attempt is retried elsewhere",
  },
  AGENT_MAX_ATTEMPTS: {
    ...integer(4, 1),
    usedBy: 'api',
    description: 'attempts per agent before its stage fails',
  },
  RETENTION_SWEEP_INTERVAL_MINUTES: {
    ...integer(60, 1),
    usedBy: 'worker, npm start',
    description:
      'how often the `retention-sweep` schedule removes attachments and exports past `retained_until`, prunes old audits and expired Idempotency-Keys',
  },
  RETENTION_AUDIT_DAYS: {
    ...integer(90, 0),
    usedBy: 'worker',
    description:
      'finished audits older than this lose their logs, agent runs and (snapshot not kept) evidence; `0`: kept forever',
  },
  RETENTION_KEEP_SNAPSHOTS: {
    ...integer(10, 1),
    usedBy: 'worker',
    description:
      "a repository's latest snapshots whose evidence is always kept, whatever their age",
  },
  EXPORT_RETENTION_DAYS: {
    ...integer(30, 1, 365),
    usedBy: 'api',
    description:
      "how long an export's file is kept when the request names no `retention_days` (1..365)",
  },
  INGESTION_MAX_RECORDS: {
    ...integer(1000, 1),
    usedBy: 'api',
    description: 'records one evidence batch may hold (more: 413 `batch_too_large`)',
  },
  INGESTION_MAX_BYTES: {
    ...integer(512 * 1024, 1),
    usedBy: 'api',
    description:
      'bytes of JSON one evidence batch may take, at most `BODY_LIMIT_BYTES` (more: 413 `batch_too_large`)',
  },
  INGESTED_EVIDENCE_WINDOW_DAYS: {
    ...integer(90, 1),
    usedBy: 'worker',
    description:
      "an audit's reconcile reads the repository's ingested evidence observed within this many days before it",
  },
  EVIDENCE_STALE_AFTER_DAYS: {
    ...integer(30, 1),
    usedBy: 'worker',
    description:
      'evidence observed longer ago than this is listed in the `stale_evidence_ids` of the assessments that use it',
  },
  DEPENDENCY_OUTAGE_BOUND_SECONDS: {
    ...integer(600, 1),
    usedBy: 'worker',
    description:
      'an audit step waits this long for an unreachable database before the audit fails with `dependency_unavailable`',
  },
  AUDIT_RECOVERY_INTERVAL_MINUTES: {
    ...integer(2, 1),
    usedBy: 'worker, npm start',
    description:
      'how often the `audit-recovery` schedule starts (or fails) queued audits whose workflow never started',
  },
  AUDIT_START_GRACE_SECONDS: {
    ...integer(120, 0),
    usedBy: 'worker, npm start',
    description: 'how long a queued audit may wait for its workflow before the recovery sweep acts',
  },
  IDEMPOTENCY_WAIT_MS: {
    ...integer(2000, 0),
    usedBy: 'api',
    description:
      'how long a request waits for another with the same Idempotency-Key before 409 `idempotency_in_progress`',
  },
  IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: {
    ...integer(60, 1),
    usedBy: 'api',
    description:
      'after this, an Idempotency-Key whose request never finished (its process died) is taken over by a retry',
  },
  IDEMPOTENCY_KEY_TTL_HOURS: {
    ...integer(24, 1),
    usedBy: 'api, worker',
    description:
      'a completed Idempotency-Key replays its response this long; then the retention sweep removes it and the key is free again',
  },
  SCHEDULE_MISSED_GRACE_SECONDS: {
    ...integer(300, 0),
    usedBy: 'worker',
    description:
      'a schedule occurrence older than this when dispatch becomes possible is missed (missed_run_policy applies)',
  },
  SCHEDULE_MAX_FAILURES: {
    ...integer(3, 1),
    usedBy: 'worker',
    description: "failed dispatches in a row after which a schedule's state is `error`",
  },
  DECISION_HISTORY_LIMIT: {
    ...integer(10_000, 100),
    usedBy: 'api',
    description:
      "events in a decision workflow's history after which it continues as new (it may wait for months)",
  },
  WORKFLOW_ACTION_TTL_HOURS: {
    ...integer(72, 1, 24 * 366),
    usedBy: 'api',
    description:
      'how long a requested workflow action waits for approval before it expires (and never executes)',
  },
  ANALYSIS_THREADS: {
    ...integer(() => Math.min(4, Math.max(1, os.availableParallelism() - 1)), 1),
    default: 'CPUs - 1, from 1 to 4',
    usedBy: 'worker',
    description:
      "worker threads that run the analyzers and reconcile, off the worker's main thread",
  },
  ANALYSIS_NICE: {
    ...integer(10, 0, 19),
    usedBy: 'worker',
    description:
      'how much lower the CPU priority of main-lane analysis threads (large audits) is than the rest of the worker (Linux nice increment; 0: the same)',
  },
  PROCESS_LAUNCHER: {
    ...flag(true),
    default: '`on`',
    usedBy: 'worker',
    description:
      '`off`: git commands are spawned by the worker itself instead of its small launcher process',
  },
  WORKFLOW_BUNDLE: {
    ...text(),
    default: 'unset (bundled at start)',
    usedBy: 'worker',
    description:
      'a workflow bundle made by `npm run bundle:workflows -- <file>` (the Docker image sets it)',
  },
  MODEL_BASE_URL: {
    ...text(),
    usedBy: 'api, worker',
    description:
      'OpenAI-compatible chat-completions endpoint for model-backed agents (`deep_review`) and the assistant; they use it when it and `MODEL_ID` are set',
  },
  MODEL_ID: {
    ...text(),
    usedBy: 'api, worker',
    description:
      'the model those agents and the assistant ask (the API reserves assistant budget at its price)',
  },
  MODEL_API_KEY: {
    ...text(),
    usedBy: 'worker',
    description: 'bearer token sent to `MODEL_BASE_URL` (none when unset)',
  },
  MODEL_MAX_TOKENS_PARAM: {
    ...choice(MAX_TOKENS_PARAMS, 'max_tokens'),
    usedBy: 'worker',
    description: '`max_completion_tokens` for OpenAI reasoning models',
  },
  MODEL_PRICES: {
    ...parsed(parsePriceTable),
    default: '`{}`',
    usedBy: 'api, worker',
    description:
      'JSON price table, USD per million tokens: `{"<model>":{"input":"2.50","cached_input":"1.25","output":"10.00"}}`',
  },
  MAX_RUNNING_AUDITS: {
    ...integerOrOff(100_000),
    default: '`0`',
    usedBy: 'api, worker',
    description:
      'audits running at once over the whole fleet (0: no limit); more wait queued, in line, and a free slot goes first to the workspace running fewest',
  },
  MAX_RUNNING_AUDITS_PER_WORKSPACE: {
    ...integerOrOff(100_000),
    default: '`0`',
    usedBy: 'api, worker',
    description: 'audits one workspace may run at once (0: no limit); its others wait queued',
  },
  SHUTDOWN_GRACE_SECONDS: {
    ...integer(30, 0, 3600),
    usedBy: 'worker',
    description:
      'on SIGTERM the worker stops polling and lets running activities finish this long; those still running then fail at once and are retried elsewhere',
  },
  AUDIT_MAX_FILES: {
    ...integer(100_000, 1),
    usedBy: 'worker',
    description:
      'files one audit reads; past it the rest are not read, a `budget` coverage gap says so and the snapshot is `partial`',
  },
  AUDIT_ANALYSIS_SECONDS: {
    ...integer(900, 1),
    usedBy: 'worker',
    description:
      "wall time of one audit's analysis (first analyzer start to the last analysis step); past it the audit fails `analysis_time_budget_exceeded`",
  },
  AUDIT_MAX_EVIDENCE: {
    ...integer(250_000, 1),
    usedBy: 'worker',
    description:
      'evidence records one analyzer (or reconcile over all) may produce; past it the audit fails `evidence_budget_exceeded`',
  },
  AUDIT_MAX_ENTITIES: {
    ...integer(50_000, 1),
    usedBy: 'worker',
    description: "entities of one audit's graph; past it the audit fails `entity_budget_exceeded`",
  },
  AUDIT_MAX_OUTPUT_BYTES: {
    ...integer(128 * 1024 * 1024, 1),
    usedBy: 'worker',
    description:
      "bytes of JSON one analysis step's result may take; past it the audit fails `output_budget_exceeded`",
  },
} satisfies Record<string, Setting<unknown>>;

export type ConfigVariableName = keyof typeof SETTINGS;

/** The value each variable is read as. */
export type SettingValues = {
  [K in ConfigVariableName]: ReturnType<(typeof SETTINGS)[K]['read']>;
};

/** README's rows, from the table. */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = Object.entries(SETTINGS).map(
  ([name, s]) => ({ name, default: s.default, usedBy: s.usedBy, description: s.description }),
);
