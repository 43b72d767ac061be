/**
 * An agent is one unit of analysis: it reads the audit's files (or earlier artifacts) and
 * returns an artifact. Each runs as its own activity with a retry policy; every attempt is an
 * agent_runs row. Agents are pure with respect to the audit's tables: what they produce is the
 * artifact, which is what makes reusing a cached artifact safe.
 */
import type { ArtifactText } from '../../../analysis/artifacts';
import type { SnapshotText } from '../../../analysis/controls-artifact';
import type { AuditRow, SourceFileRow } from '../../../db/audits';
import type { ModelUsage } from '../../../domain/audits/pricing';
import type { StageKeyName } from '../../../domain/contract/values';
import type { ModelProvider } from './model';

export type SourceTypeInput = 'code' | 'cloud' | 'cicd' | 'all';

export interface AgentInput {
  audit: AuditRow;
  /** The files this agent reads (its source type, or all), manifest order. */
  files: SourceFileRow[];
  readFile(sha256: string): Promise<Buffer>;
  /** Artifacts already produced in this audit, by agent key. */
  priorArtifacts(): Promise<
    Array<{ agentKey: string; stage: string; artifact: Record<string, unknown> }>
  >;
  /** The same artifacts as JSON text (for the analysis pool to parse, off the main thread). */
  priorArtifactTexts(): Promise<Array<{ agentKey: string; json: string }>>;
  /** The same artifacts by id, without their content. */
  priorArtifactRefs(): Promise<
    Array<{ agentKey: string; stage: string; artifactId: string; kind: string; title: string }>
  >;
  /**
   * The audit's architecture snapshot (uuid evidence ids) as JSON text, for the analysis pool to
   * parse; null before the reconcile stage has stored it.
   */
  snapshotText(): Promise<SnapshotText | null>;
  model: ModelProvider | null;
  attempt: number;
  signal: AbortSignal;
  log(
    level: 'info' | 'warning' | 'error',
    message: string,
    details?: Record<string, unknown>,
  ): Promise<void>;
}

/**
 * What an agent produced: its artifact, or (built in an analysis pool thread) the artifact's
 * JSON text, which the worker's main thread stores without parsing or building it.
 */
export type AgentResult = AgentResultFields &
  ({ artifact: Record<string, unknown> } | { artifactText: ArtifactText });

interface AgentResultFields {
  kind: string;
  title: string;
  evidenceIds?: string[];
  /** Decimal in [0, 1]. */
  confidence: string;
  /** One line for the stage summary. */
  summary: string;
  usage?: ModelUsage;
  modelId?: string;
}

export interface Agent {
  key: string;
  version: string;
  stage: StageKeyName;
  /** Calls a model; runs only when a provider is configured and the audit asked for deep review. */
  modelBacked: boolean;
  reasoningEffort: 'none' | 'low' | 'medium' | 'high';
  costKind: 'analysis' | 'remediation';
  input: SourceTypeInput;
  /** When false the agent's output depends on more than its files (never cached). */
  cacheable: boolean;
  run(input: AgentInput): Promise<AgentResult>;
}

/**
 * An agent without a model over the files of one source type (code, cloud or CI/CD): its result
 * depends on those files only, so it may be cached.
 */
export function sourceTypeAgent(
  key: string,
  version: string,
  stage: 'code' | 'cloud' | 'cicd',
  run: Agent['run'],
): Agent {
  return {
    key,
    version,
    stage,
    modelBacked: false,
    reasoningEffort: 'none',
    costKind: 'analysis',
    input: stage,
    cacheable: true,
    run,
  };
}

/** A failure an agent reports with a stable code; `retryable: false` ends the stage at once. */
export class AgentError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}
