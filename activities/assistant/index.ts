/**
 * Activities of the AssistantRunWorkflow: begin the run, answer from the graph (cache, then the
 * graph specialist), answer with the model through read-only tools, and end the run. Each one
 * is safe to retry: runs move queued -> running -> ended once, and every model call's usage is
 * added to the run as it happens (a retried call is paid for, so it is counted).
 */
import crypto from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import {
  addRunUsage,
  cachedAnswer,
  endRun,
  messageById,
  relationshipHistory,
  repositoryRecords,
  runById,
  setRunRoute,
  startRun,
  type RunEnd,
  type RunRow,
} from '../../db/assistant';
import type { SnapshotRow } from '../../db/architecture';
import { auditGateOf, previousSnapshotOnBranch, snapshotWithAudit } from '../../db/changes';
import { answerFromGraph, NEEDS_MODEL_TEXT } from '../../domain/assistant/answers';
import { plainText } from '../../domain/output/plain';
import {
  emptyGrounding,
  mergeGrounding,
  type AssistantContext,
} from '../../domain/assistant/facts';
import {
  normalizeQuestion,
  routeQuestion,
  type RoutedQuestion,
} from '../../domain/assistant/route';
import {
  ASSISTANT_TOOLS,
  checkCitations,
  runTool,
  SYSTEM_PROMPT,
  userPrompt,
} from '../../domain/assistant/tools';
import type { Graph } from '../../domain/architecture/graph';
import { costUsd, type ModelPrice } from '../../domain/audits/pricing';
import type { Logger } from '../../platform/logger';
import type { ChatMessage, ModelProvider } from '../audits/agents/model';

export interface AssistantActivityDeps {
  db: Knex;
  log: Logger;
  model: ModelProvider | null;
  prices: Record<string, ModelPrice>;
}

/** Model rounds per run (each may call tools); the last one offers no tools. */
const MAX_ROUNDS = 4;
/** Tool calls honoured per round. */
const MAX_CALLS_PER_ROUND = 4;
/** Past this prompt size (characters) the model gets no more tools and must answer. */
const MAX_PROMPT_CHARS = 48_000;
const MODEL_TIMEOUT_MS = 60_000;

function fail(code: string, message: string, retryable: boolean): never {
  throw ApplicationFailure.create({ type: code, message, nonRetryable: !retryable });
}

async function loadRun(db: Knex, runId: string): Promise<RunRow> {
  const run = await runById(db, runId);
  if (!run) fail('run_not_found', `assistant run ${runId} does not exist`, false);
  return run;
}

const isoOf = (d: Date) => d.toISOString();

/** Loads everything an answer may rest on, from the run's context snapshot. */
async function loadContext(db: Knex, run: RunRow): Promise<AssistantContext> {
  const snapshot = run.context_snapshot_id
    ? await snapshotWithAudit(db, run.workspace_id, run.context_snapshot_id)
    : undefined;
  if (!snapshot) fail('snapshot_gone', `the context snapshot of run ${run.id} is gone`, false);
  // What changed: against the baseline of the snapshot's own change gate (a branch's is its base
  // branch at the merge-base), else the snapshot before it on its branch.
  const gateBaseline = (await auditGateOf(db, snapshot.audit_id))?.previous_snapshot_id;
  const previous =
    (gateBaseline ? await snapshotWithAudit(db, run.workspace_id, gateBaseline) : undefined) ??
    (await previousSnapshotOnBranch(db, snapshot, snapshot.branch_ref));
  const repositoryId = snapshot.repository_id ?? run.repository_id;
  const [records, history] = repositoryId
    ? await Promise.all([
        repositoryRecords(db, run.workspace_id, repositoryId),
        relationshipHistory(db, run.workspace_id, repositoryId),
      ])
    : [{ cases: [], decisions: [], findings: [] }, []];
  const side = (s: SnapshotRow) => ({
    id: s.id,
    generated_at: isoOf(s.generated_at),
    sources: s.sources,
    graph: s as unknown as Graph,
  });
  return {
    snapshot: side(snapshot),
    previous: previous ? side(previous) : null,
    history: history.map((h) => ({ ...h, generated_at: isoOf(h.generated_at) })),
    ...records,
  };
}

const cacheKeyOf = (question: string, snapshotId: string, routed: RoutedQuestion, by: string) =>
  crypto
    .createHash('sha256')
    .update(
      JSON.stringify([
        normalizeQuestion(question),
        snapshotId,
        routed.specialist,
        routed.route,
        by,
      ]),
    )
    .digest('hex');

/** Heartbeats while `work` runs, so a cancel reaches the activity and a lost worker is noticed. */
async function withHeartbeat<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 2000);
  try {
    ctx.heartbeat();
    return await work(ctx.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}

export function createAssistantActivities(deps: AssistantActivityDeps) {
  const { db } = deps;

  return {
    /** queued -> running; false when the run left `queued` otherwise (cancelled meanwhile). */
    async beginAssistantRun(runId: string): Promise<boolean> {
      if (await startRun(db, runId)) return true;
      return (await loadRun(db, runId)).status === 'running';
    },

    /**
     * Routes the question, then answers it from the cache or the graph specialist when it can.
     * `needs_model`: only the model can answer (and one is configured).
     */
    async answerAssistantRunFromGraph(
      runId: string,
    ): Promise<'answered' | 'refused' | 'needs_model' | 'ended'> {
      const run = await loadRun(db, runId);
      if (run.status !== 'running') return 'ended';
      const question = (await messageById(db, run.user_message_id))!.content;
      const ctx = await loadContext(db, run);
      const graph = answerFromGraph(ctx, question, routeQuestion(question));
      const routed = graph.routed;
      const by = graph.kind === 'answer' ? 'graph' : `model:${deps.model?.modelId ?? 'none'}`;
      const cacheKey = cacheKeyOf(question, ctx.snapshot.id, routed, by);
      await setRunRoute(db, runId, {
        route: routed.route,
        specialist: routed.specialist,
        cache_key: cacheKey,
      });
      const base = {
        route: routed.route,
        specialist: routed.specialist,
        snapshot_id: ctx.snapshot.id,
      };
      const cached = await cachedAnswer(db, run.workspace_id, cacheKey, runId);
      if (cached) {
        await endRun(db, runId, {
          status: 'completed',
          cacheHit: true,
          answer: {
            content: cached.content,
            structured: { ...cached.structured, cached_from_message_id: cached.id },
          },
        });
        return 'answered';
      }
      if (graph.kind === 'answer') {
        await endRun(db, runId, {
          status: 'completed',
          answer: {
            content: graph.text,
            structured: { ...base, answered_by: 'graph', ...graph.grounding },
          },
        });
        return 'answered';
      }
      if (!deps.model) {
        await endRun(db, runId, {
          status: 'refused',
          errorCode: 'model_not_configured',
          answer: {
            content: NEEDS_MODEL_TEXT,
            structured: { ...base, answered_by: 'none', ...emptyGrounding() },
          },
        });
        return 'refused';
      }
      return 'needs_model';
    },

    /** Answers with the model through the read-only tools; a model error fails the attempt. */
    async answerAssistantRunWithModel(runId: string): Promise<void> {
      const model = deps.model;
      if (!model) fail('model_not_configured', 'no model provider is configured', false);
      const run = await loadRun(db, runId);
      if (run.status !== 'running') return;
      const question = (await messageById(db, run.user_message_id))!.content;
      const ctx = await loadContext(db, run);
      const price = deps.prices[model.modelId];
      const messages: ChatMessage[] = [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: userPrompt(question, ctx.snapshot.id) },
      ];
      let returned = emptyGrounding();
      const calls: string[] = [];
      let outputLeft = run.max_output_tokens;
      const answer = await withHeartbeat(async (signal) => {
        for (let round = 1; ; round++) {
          const size = messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);
          const offerTools = round < MAX_ROUNDS && size < MAX_PROMPT_CHARS;
          let result;
          try {
            result = await model.complete({
              messages,
              maxOutputTokens: outputLeft,
              timeoutMs: MODEL_TIMEOUT_MS,
              signal,
              ...(offerTools ? { tools: ASSISTANT_TOOLS } : {}),
            });
          } catch (err) {
            const e = err as { code?: unknown; retryable?: unknown; message?: string };
            if (typeof e.code === 'string' && typeof e.retryable === 'boolean')
              fail(e.code, e.message ?? e.code, e.retryable);
            throw err;
          }
          await addRunUsage(db, runId, result.usage, costUsd(result.usage, price), result.modelId);
          outputLeft -= result.usage.outputTokens;
          const toolCalls = result.toolCalls ?? [];
          if (toolCalls.length === 0 || !offerTools) return result.text;
          if (outputLeft <= 0)
            fail(
              'output_token_limit',
              `the model used all ${run.max_output_tokens} output tokens`,
              false,
            );
          const honoured = toolCalls.slice(0, MAX_CALLS_PER_ROUND);
          messages.push({ role: 'assistant', content: result.text || null, toolCalls: honoured });
          for (const call of honoured) {
            const out = runTool(ctx, call.name, call.arguments);
            calls.push(call.name);
            returned = mergeGrounding(returned, out.grounding);
            messages.push({ role: 'tool', toolCallId: call.id, content: out.content });
          }
        }
      });
      const checked = checkCitations(answer, returned);
      const end: RunEnd = {
        status: 'completed',
        droppedCitations: checked.dropped,
        answer: {
          // The model may repeat repository text: plain text, no control characters.
          content: plainText(checked.text) || 'The model gave no answer.',
          structured: {
            route: run.route,
            specialist: run.specialist,
            snapshot_id: ctx.snapshot.id,
            answered_by: 'model',
            model_id: model.modelId,
            tool_calls: calls,
            dropped_citations: checked.dropped,
            ...checked.grounding,
          },
        },
      };
      await endRun(db, runId, end);
    },

    /** Ends an active run without an answer (failed or cancelled); a no-op once it ended. */
    async endAssistantRun(input: {
      runId: string;
      status: 'failed' | 'cancelled';
      errorCode: string;
      errorMessage?: string;
    }): Promise<void> {
      await endRun(db, input.runId, {
        status: input.status,
        errorCode: input.errorCode,
        errorMessage: input.errorMessage?.slice(0, 2000) ?? null,
      });
    },
  };
}

export type AssistantActivities = ReturnType<typeof createAssistantActivities>;
