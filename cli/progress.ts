/**
 * Live progress of an audit: polls getAudit and the agent timeline, and reports each change of a
 * stage or an agent run. In a terminal (and not in CI) it is a listr2 task list that redraws in
 * place; otherwise one plain line per change, which reads well in a CI log.
 */
import { Listr } from 'listr2';
import type { components } from './generated/api';
import { terminalCell } from '../domain/output/terminal';
import { unwrap, type Api } from './client';

type Audit = components['schemas']['AuditResponse'];
type Stage = Audit['stages'][number];
type AgentRun = components['schemas']['AgentRunResponse'];

const TERMINAL_AUDIT = new Set(['completed', 'failed', 'cancelled']);
const TERMINAL_STAGE = new Set(['completed', 'failed', 'skipped']);

export interface WatchResult {
  audit: Audit;
  timedOut: boolean;
}

/** What the sink changes on a listr2 task. */
interface TaskView {
  title: string;
  output: string;
  skip(message: string): void;
}

interface Sink {
  stage(stage: Stage): void;
  agent(run: AgentRun): void;
  /** Called once the audit has ended (or the wait timed out). */
  finish(audit: Audit): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stageText(s: Stage): string {
  const extra = s.status === 'failed' ? (s.error_code ?? s.summary) : s.summary;
  // The summary carries repository text (a path): made inert for the terminal.
  return terminalCell(`${s.key}: ${s.status}${extra ? ` (${extra})` : ''}`);
}

function agentText(r: AgentRun): string {
  const model = r.model_id ? `, ${r.model_id}` : '';
  const cost = r.cost_usd && Number(r.cost_usd) > 0 ? `, $${r.cost_usd}` : '';
  const err = r.error_code ? `, ${r.error_code}` : '';
  return terminalCell(`agent ${r.agent_key}: ${r.status}${model}${cost}${err}`);
}

/** One line per change, with the time: for logs. */
export function plainSink(write: (line: string) => void): Sink {
  const at = () => new Date().toISOString().slice(11, 19);
  return {
    stage: (s) => write(`[${at()}] stage ${stageText(s)}`),
    agent: (r) => write(`[${at()}] ${agentText(r)}`),
    finish: (a) => write(`[${at()}] audit ${a.id}: ${a.status}`),
  };
}

/** A listr2 task per stage, redrawn in place; agent runs show under the stage they ran in. */
export function listrSink(stageKeys: readonly string[]): {
  sink: Sink;
  done: Promise<unknown>;
  /** Ends every open task (the watch failed), so the task list stops redrawing. */
  stop(): void;
} {
  const waiting = new Map<string, { resolve: (s: Stage) => void; task?: TaskView }>();
  const outcome = new Map<string, Promise<Stage>>();
  for (const key of stageKeys)
    outcome.set(key, new Promise<Stage>((resolve) => waiting.set(key, { resolve })));
  const open = new Set(stageKeys);
  const last = new Map<string, Stage>();
  let running: string | undefined;
  // listr2 drops a task's output buffer once the task ends, and writing to it then throws:
  // only tasks still open are written to, and a cosmetic update never fails the watch.
  const update = (key: string | undefined, change: (task: TaskView) => void) => {
    const task = key && open.has(key) ? waiting.get(key)?.task : undefined;
    if (!task) return;
    try {
      change(task);
    } catch {
      // the task has just ended
    }
  };
  const listr = new Listr(
    stageKeys.map((key) => ({
      title: `${key}: pending`,
      task: async (_ctx, task) => {
        waiting.get(key)!.task = task;
        const s = await outcome.get(key)!;
        task.title = stageText(s);
        if (s.status === 'failed') throw new Error(stageText(s));
        if (s.status !== 'completed') task.skip(stageText(s));
      },
    })),
    {
      concurrent: true,
      exitOnError: false,
      renderer: 'default',
      rendererOptions: { collapseSubtasks: false, showErrorMessage: false },
    },
  );
  const done = listr.run().catch(() => undefined);
  return {
    done,
    stop: () => {
      for (const key of [...open]) {
        open.delete(key);
        waiting.get(key)?.resolve(last.get(key) ?? ({ key, status: 'pending' } as Stage));
      }
    },
    sink: {
      stage: (s) => {
        last.set(s.key, s);
        if (s.status === 'running') running = s.key;
        update(s.key, (t) => (t.title = stageText(s)));
        if (TERMINAL_STAGE.has(s.status)) {
          open.delete(s.key);
          waiting.get(s.key)?.resolve(s);
        }
      },
      agent: (r) => {
        // An agent shows under its stage (`cicd-analyzer` under cicd), else the latest running.
        const own = stageKeys.find((k) => r.agent_key === k || r.agent_key.startsWith(`${k}-`));
        update(own ?? running, (t) => (t.output = agentText(r)));
      },
      finish: (a) => {
        for (const s of a.stages) {
          open.delete(s.key);
          waiting.get(s.key)?.resolve(s);
        }
      },
    },
  };
}

/** Polls the audit until it ends or `timeoutMs` passes, telling `sink` of every change. */
export async function watchAudit(
  api: Api,
  workspaceId: string,
  auditId: string,
  sink: Sink,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<WatchResult> {
  const stageSeen = new Map<string, string>();
  const agentSeen = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  const path = { workspace_id: workspaceId, audit_id: auditId };
  for (;;) {
    const audit = unwrap(
      await api.typed.GET('/v1/workspaces/{workspace_id}/audits/{audit_id}', { params: { path } }),
    );
    for (const s of audit.stages) {
      const key = `${s.status}|${s.summary ?? ''}`;
      if (stageSeen.get(s.key) !== key && !(s.status === 'pending' && !stageSeen.has(s.key)))
        sink.stage(s);
      stageSeen.set(s.key, key);
    }
    const timeline = await api.typed.GET(
      '/v1/workspaces/{workspace_id}/audits/{audit_id}/agent-runs',
      {
        params: { path },
      },
    );
    for (const r of timeline.data?.runs ?? []) {
      const key = `${r.status}|${r.attempt}`;
      if (agentSeen.get(r.id) !== key) sink.agent(r);
      agentSeen.set(r.id, key);
    }
    const ended = TERMINAL_AUDIT.has(audit.status);
    if (ended || Date.now() >= deadline) {
      sink.finish(audit);
      return { audit, timedOut: !ended };
    }
    await sleep(intervalMs);
  }
}
