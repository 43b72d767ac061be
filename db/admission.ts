/**
 * Admission of audits: at most `fleet` audits running at once over all workspaces and at most
 * `workspace` per workspace (null: no limit). Audits wait in line in the order their workflows
 * asked; a free slot goes to the waiting audit whose workspace runs the fewest audits (oldest
 * first among equals), so one workspace's many audits cannot hold another's behind them.
 */
import type { Knex } from 'knex';
import { appendLog } from './audits';

interface AdmissionLimits {
  fleet: number | null;
  workspace: number | null;
}

export interface Admission {
  admitted: boolean;
  /** 1-based place in line when not admitted (1: next to run). */
  position: number | null;
  /** Audits waiting in line in all, after this decision. */
  waiting: number;
}

/** One lock for every admission decision: they read and change the same counts. */
const ADMISSION_LOCK = 7_140_029;

/**
 * Asks to run audit `auditId`: admitted (status `running`, logged) when the limits allow and it
 * is first in the fair order, else its place in line. An audit that is not queued is admitted
 * as it is (already running, or ended: nothing to wait for).
 */
export async function requestAdmission(
  db: Knex,
  auditId: string,
  limits: AdmissionLimits,
): Promise<Admission> {
  return db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [ADMISSION_LOCK]);
    const mine = await trx('audits')
      .where({ id: auditId, status: 'queued' })
      .update({ admission_requested_at: trx.raw('coalesce(admission_requested_at, now())') })
      .returning<Array<{ workspace_id: string }>>('workspace_id');
    if (!mine[0]) return { admitted: true, position: null, waiting: 0 };
    const running = new Map<string, number>();
    for (const r of (await trx('audits')
      .where({ status: 'running' })
      .groupBy('workspace_id')
      .select('workspace_id')
      .count('* as n')) as Array<{ workspace_id: string; n: string | number }>)
      running.set(r.workspace_id, Number(r.n));
    const line = (await trx('audits')
      .where({ status: 'queued' })
      .whereNotNull('admission_requested_at')
      .orderBy([{ column: 'admission_requested_at' }, { column: 'id' }])
      .select('id', 'workspace_id')) as Array<{ id: string; workspace_id: string }>;
    const order = fairOrder(line, running, limits);
    const total = [...running.values()].reduce((a, b) => a + b, 0);
    const free = limits.fleet === null ? Infinity : Math.max(0, limits.fleet - total);
    const index = order.indexOf(auditId);
    if (index >= 0 && index < free) {
      await trx('audits')
        .where({ id: auditId })
        .update({ status: 'running', updated_at: trx.fn.now() });
      await appendLog(trx, auditId, { level: 'info', source: 'stage', message: 'audit started' });
      return { admitted: true, position: null, waiting: line.length - 1 };
    }
    // Blocked by its workspace's limit, or behind others: its place counts those before it.
    const blocked = line.filter((a) => !order.includes(a.id)).findIndex((a) => a.id === auditId);
    const place = index >= 0 ? index + 1 : order.length + blocked + 1;
    return { admitted: false, position: place, waiting: line.length };
  });
}

/**
 * The order in which waiting audits get free slots: repeatedly, among audits whose workspace is
 * under its limit, the one whose workspace runs the fewest (counting those placed before it),
 * oldest first. Audits of a workspace at its limit are left out (they wait for their own).
 */
function fairOrder(
  line: ReadonlyArray<{ id: string; workspace_id: string }>,
  running: ReadonlyMap<string, number>,
  limits: AdmissionLimits,
): string[] {
  const counts = new Map(running);
  const byWorkspace = new Map<string, string[]>();
  for (const a of line)
    byWorkspace.set(a.workspace_id, [...(byWorkspace.get(a.workspace_id) ?? []), a.id]);
  const age = new Map(line.map((a, i) => [a.id, i] as const));
  const order: string[] = [];
  for (;;) {
    let best: { ws: string; id: string } | undefined;
    for (const [ws, ids] of byWorkspace) {
      if (ids.length === 0) continue;
      const n = counts.get(ws) ?? 0;
      if (limits.workspace !== null && n >= limits.workspace) continue;
      const head = ids[0]!;
      if (
        !best ||
        n < (counts.get(best.ws) ?? 0) ||
        (n === (counts.get(best.ws) ?? 0) && age.get(head)! < age.get(best.id)!)
      )
        best = { ws, id: head };
    }
    if (!best) return order;
    order.push(best.id);
    byWorkspace.get(best.ws)!.shift();
    counts.set(best.ws, (counts.get(best.ws) ?? 0) + 1);
  }
}
