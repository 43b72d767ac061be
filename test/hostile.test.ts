/**
 * The hostile-input suite, generated from the operation registry: every registered operation is
 * probed as a hostile tenant would, with
 * - tenant isolation: another workspace's ids in the path answer exactly as ids that exist
 *   nowhere (404, existence not probeable), and never show the other workspace's data;
 * - the scope matrix: each of the 25 single-scope tokens is refused (403 insufficient_scope) or
 *   let through exactly as the operation's scope says;
 * - bad credentials: none, malformed, unknown, revoked -> 401 problem;
 * - a seeded, bounded property-based fuzz (fast-check) of path ids, query and body, schema-valid
 *   and hostile (NUL, unpaired surrogates, huge numbers, urn:uuid ids, wrong types...): no 5xx,
 *   and every 4xx is problem+json.
 * FUZZ_CASES (total fuzz requests, default 3000) and FUZZ_SEED change the fuzz.
 */
import crypto from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { OPERATIONS } from '../api/operations';
import { ensureCatalog, insertNewFindings } from '../db/controls';
import { updateRemediation } from '../db/remediations';
import { updateWorkflowAction } from '../db/workflow-actions';
import type { AnyOperation } from '../api/registry/operation';
import { SCOPES, type ScopeName } from '../domain/contract/values';
import { tarGz } from './helpers/archives';
import { startTestApp, type TestApp } from './helpers/app';
import { completedAudit, createTenant, createToken, type Tenant } from './helpers/factories';
import { requestArb, valueArb, type FuzzRequest } from './helpers/hostile';
import { call, isProblem, type Reply } from './helpers/http';

const FUZZ_CASES = Number(process.env.FUZZ_CASES ?? 3000);
const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261126);
/** Requests in flight at once (the machine is shared: kept small). */
const PARALLEL = 6;

let app: TestApp;
let a: Seeded;
let b: Seeded;

/** A tenant with one real resource of each kind the API can make without a worker. */
interface Seeded {
  tenant: Tenant;
  /** Path parameter name -> the ids of that kind in this workspace. */
  ids: Record<string, string[]>;
}

async function seed(tenant: Tenant): Promise<Seeded> {
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const post = async (path: string, body: unknown, expect = 201) => {
    const reply = await call(app.url, 'POST', `${ws}${path}`, { token: tenant.token, body });
    if (reply.status !== expect) throw new Error(`seed ${path}: ${reply.status} ${reply.text}`);
    return reply.body as { id: string };
  };
  const repository = await post('/repositories', {
    name: `seed-${crypto.randomBytes(3).toString('hex')}`,
    url: 'https://git.example.com/seed.git',
  });
  const archive = await tarGz([{ name: 'src/app.ts', data: 'export const x = 1;\n' }]);
  const uploaded = await call(app.url, 'POST', `${ws}/uploads`, {
    token: tenant.token,
    raw: archive,
    headers: { 'Content-Type': 'application/gzip' },
  });
  if (uploaded.status !== 201) throw new Error(`seed upload: ${uploaded.text}`);
  // No worker runs here: the audit stays queued, which is all its id needs.
  const audit = await post('/audits', { upload_id: uploaded.body.id }, 202);
  const attachment = await post(`/audits/${audit.id}/attachments`, {
    upload_id: uploaded.body.id,
  });
  const profile = await post(`/repositories/${repository.id}/audit-profiles`, {
    name: 'seeded',
    branch_ref: 'main',
  });
  const schedule = await post('/audit-schedules', {
    name: 'seeded',
    repository_id: repository.id,
    timezone: 'UTC',
    cadence: 'weekly',
    local_hour: 3,
    local_minute: 0,
    weekday: 1,
  });
  // A finding (no worker runs here to raise one), a remediation of it and a workflow action,
  // both moved by the database to a state whose every move is refused before reaching their
  // workflows (which no worker runs here).
  const db = app.services.db;
  const control = (await ensureCatalog(db)).get('owners-declared')!;
  const findingId = crypto.randomUUID();
  const now = new Date();
  await insertNewFindings(db, [
    {
      id: findingId,
      workspace_id: tenant.workspaceId,
      repository_id: repository.id,
      scope_key: repository.id,
      control_id: control.id,
      control_key: control.key,
      severity: 'low',
      title: 'No CODEOWNERS file',
      detail: 'seeded',
      fingerprint: crypto.randomBytes(32).toString('hex'),
      status: 'open',
      entity_key: null,
      evidence_ids: [],
      locations: [],
      first_seen_audit_id: audit.id,
      last_seen_audit_id: audit.id,
      first_seen_at: now,
      last_seen_at: now,
      occurrences: 1,
    },
  ]);
  const remediation = await post('/remediations', {
    finding_ids: [findingId],
    plan: {
      summary: 'Add owners.',
      steps: [{ title: 'Add CODEOWNERS', detail: 'Name the owners.' }],
      risk: 'low',
      effort: 'small',
    },
  });
  await updateRemediation(db, remediation.id, { status: 'rejected' });
  const action = await post('/workflow-actions', {
    kind: 'delete_repository',
    target: { repository_id: repository.id },
    reason: 'seeded',
  });
  await updateWorkflowAction(db, action.id, { status: 'expired' });
  // A completed audit (stored directly: no worker here) for the report and export operations,
  // an export of it (its workflow waits for a worker that never comes) and an evidence batch.
  const completed = await completedAudit(app.services.db, tenant, repository.id);
  const exported = await post(`/audits/${completed.id}/exports`, { format: 'mermaid' }, 202);
  const ingested = await post(
    `/repositories/${repository.id}/evidence`,
    {
      batch_key: 'seed',
      records: [
        {
          kind: 'runtime_call',
          provider: 'opentelemetry',
          source_type: 'cloud',
          subject_key: 'service:a',
          object_key: 'service:b',
          observed_at: new Date().toISOString(),
        },
      ],
    },
    202,
  );
  const token = await post('/tokens', {
    name: 'seeded',
    scopes: ['audits:read'],
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  const conversation = await post('/assistant/conversations', {
    title: 'seeded',
    repository_id: repository.id,
  });
  // A finished assistant run, stored directly: asking needs a completed audit, which no worker
  // makes here.
  const run = await seedAssistantRun(tenant, conversation.id);
  return {
    tenant,
    ids: {
      workspace_id: [tenant.workspaceId],
      conversation_id: [conversation.id],
      run_id: [run],
      repository_id: [repository.id],
      upload_id: [uploaded.body.id],
      audit_id: [audit.id, completed.id],
      export_id: [exported.id],
      ingestion_id: [ingested.id],
      attachment_id: [attachment.id],
      profile_id: [profile.id],
      schedule_id: [schedule.id],
      token_id: [token.id],
      finding_id: [findingId],
      remediation_id: [remediation.id],
      action_id: [action.id],
    },
  };
}

async function seedAssistantRun(tenant: Tenant, conversationId: string): Promise<string> {
  const db = app.services.db;
  const message = crypto.randomUUID();
  const run = crypto.randomUUID();
  const common = { workspace_id: tenant.workspaceId, conversation_id: conversationId };
  await db('assistant_messages').insert({
    ...common,
    id: message,
    author_id: tenant.memberId,
    role: 'user',
    content: 'What depends on service:api?',
  });
  await db('assistant_runs').insert({
    ...common,
    id: run,
    user_message_id: message,
    requested_by: tenant.memberId,
    status: 'completed',
    max_output_tokens: 1024,
    workflow_id: `assistant-run-${run}`,
  });
  return run;
}

test.before(async () => {
  // A quota no test run reaches: the fuzz sends thousands of requests with one token.
  app = await startTestApp({ rateLimitQuota: 1_000_000 });
  [a, b] = await Promise.all([
    createTenant(app.services.db).then(seed),
    createTenant(app.services.db).then(seed),
  ]);
});
test.after.always(async () => {
  await app?.close();
});

const paramNames = (op: AnyOperation) => [...op.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);

/** `op.path` with each parameter taken from `pick` (a fresh random uuid where it has none). */
function concrete(op: AnyOperation, pick: (name: string) => string | undefined): string {
  return paramNames(op).reduce(
    (p, name) => p.replace(`{${name}}`, pick(name) ?? crypto.randomUUID()),
    op.path,
  );
}

/** Runs `jobs` with at most PARALLEL in flight. */
async function inParallel<T>(jobs: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

/** Why a reply breaks the rules every reply keeps (no 5xx, every 4xx a problem), or null. */
function violation(reply: Reply): string | null {
  if (reply.status >= 500) return `${reply.status}: ${reply.text.slice(0, 300)}`;
  if (reply.status >= 400 && !isProblem(reply))
    return `non-problem ${reply.status}: ${reply.text.slice(0, 300)}`;
  return null;
}

function noViolations(t: ExecutionContext, found: string[], label: string) {
  t.deepEqual(found.slice(0, 20), [], `${label}: ${found.length} violations`);
}

test('tenant isolation: another workspace answers 404, its ids are indistinguishable from ids that exist nowhere', async (t) => {
  const found: string[] = [];
  const checks: Array<() => Promise<void>> = [];
  const foreign = new Set(Object.values(a.ids).flat());
  for (const op of OPERATIONS.filter((o) => o.path.includes('{workspace_id}'))) {
    const method = op.method.toUpperCase();
    const label = `${op.operationId}`;
    // 1. B's token on A's workspace (and A's ids): 404 not_found from the tenancy check.
    checks.push(async () => {
      const reply = await call(
        app.url,
        method,
        concrete(op, (n) => a.ids[n]?.[0]),
        {
          token: b.tenant.token,
        },
      );
      if (reply.status !== 404 || reply.body?.code !== 'not_found' || !isProblem(reply))
        found.push(`${label} on another workspace: ${reply.status} ${reply.text.slice(0, 200)}`);
    });
    // 2. B's token in B's workspace with A's resource ids: answered as ids that exist nowhere.
    if (paramNames(op).length > 1) {
      checks.push(async () => {
        const pathA = concrete(op, (n) =>
          n === 'workspace_id' ? b.tenant.workspaceId : a.ids[n]?.[0],
        );
        const withA = await call(app.url, method, pathA, { token: b.tenant.token });
        const withNone = await call(
          app.url,
          method,
          concrete(op, (n) => (n === 'workspace_id' ? b.tenant.workspaceId : undefined)),
          { token: b.tenant.token },
        );
        if (withA.status < 400 || withA.status >= 500 || !isProblem(withA))
          found.push(
            `${label} with another workspace's ids: ${withA.status} ${withA.text.slice(0, 200)}`,
          );
        if (withA.status !== withNone.status || withA.body?.code !== withNone.body?.code)
          found.push(
            `${label}: another workspace's ids (${withA.status} ${withA.body?.code}) differ from unknown ids (${withNone.status} ${withNone.body?.code})`,
          );
        // (A 404 may name the id the client sent; any other of A's ids is a leak.)
        for (const id of foreign)
          if (withA.text.includes(id) && !pathA.includes(id))
            found.push(`${label} shows the other workspace's id ${id}`);
      });
    } else if (op.method === 'get') {
      // 3. A list in B's workspace never shows A's ids.
      checks.push(async () => {
        const reply = await call(
          app.url,
          method,
          concrete(op, () => b.tenant.workspaceId),
          {
            token: b.tenant.token,
          },
        );
        for (const id of foreign)
          if (reply.text.includes(id)) found.push(`${label} in B lists A's id ${id}`);
      });
    }
  }
  await inParallel(checks);
  noViolations(t, found, 'isolation');
  // A's resources were left as they were.
  const repo = await call(
    app.url,
    'GET',
    `/v1/workspaces/${a.tenant.workspaceId}/repositories/${a.ids.repository_id![0]}`,
    { token: a.tenant.token },
  );
  t.is(repo.status, 200, repo.text);
  t.log(`isolation: ${checks.length} checks`);
});

test("tenant isolation in bodies: another workspace's ids answer as ids that exist nowhere", async (t) => {
  const found: string[] = [];
  const jobs: Array<() => Promise<void>> = [];
  const pools = { uuids: [] as string[] };
  let probed = 0;
  for (const [i, op] of OPERATIONS.entries()) {
    const props =
      (
        op.body as
          | { properties?: Record<string, { format?: string; anyOf?: Array<{ format?: string }> }> }
          | undefined
      )?.properties ?? {};
    // Top-level id fields naming a kind of resource the other workspace has.
    const idFields = Object.entries(props)
      .filter(
        ([name, s]) =>
          a.ids[name] && (s.format === 'uuid' || s.anyOf?.some((x) => x.format === 'uuid')),
      )
      .map(([name]) => name);
    if (idFields.length === 0) continue;
    probed++;
    const path = concrete(op, (n) => b.ids[n]?.[0]);
    const bodies = fc.sample(valueArb(op.body as never, pools, 0), {
      seed: FUZZ_SEED + i,
      numRuns: 8,
    });
    for (const generated of bodies) {
      const body = generated as Record<string, unknown>;
      const withA = { ...body, ...Object.fromEntries(idFields.map((f) => [f, a.ids[f]![0]])) };
      const withNone = {
        ...body,
        ...Object.fromEntries(idFields.map((f) => [f, crypto.randomUUID()])),
      };
      jobs.push(async () => {
        const foreign = await call(app.url, op.method.toUpperCase(), path, {
          token: b.tenant.token,
          body: withA,
        });
        const unknown = await call(app.url, op.method.toUpperCase(), path, {
          token: b.tenant.token,
          body: withNone,
        });
        const label = `${op.operationId} ${JSON.stringify(withA).slice(0, 200)}`;
        if (foreign.status < 400 || foreign.status >= 500 || !isProblem(foreign))
          found.push(
            `${label}: another workspace's ids accepted: ${foreign.status} ${foreign.text.slice(0, 200)}`,
          );
        if (foreign.status !== unknown.status || foreign.body?.code !== unknown.body?.code)
          found.push(
            `${label}: ${foreign.status} ${foreign.body?.code} vs unknown ids ${unknown.status} ${unknown.body?.code}`,
          );
      });
    }
  }
  t.true(probed >= 4, `${probed} operations take ids in their body`);
  await inParallel(jobs);
  noViolations(t, found, 'body isolation');
  t.log(`body isolation: ${jobs.length} checks over ${probed} operations`);
});

test('the scope matrix: each of the 25 single-scope tokens is refused or let through exactly as the operation says', async (t) => {
  t.is(SCOPES.length, 25);
  const tokens = new Map<ScopeName, string>();
  for (const scope of SCOPES)
    tokens.set(scope, (await createToken(app.services.db, a.tenant, [scope])).token);
  const found: string[] = [];
  const jobs: Array<() => Promise<void>> = [];
  const scoped = OPERATIONS.filter((op) => op.access.kind === 'scope');
  t.true(scoped.length > 40, 'most operations name one scope');
  for (const op of scoped) {
    const required = (op.access as { scope: ScopeName }).scope;
    // Unknown resource ids: a token let through cannot change anything.
    const path = concrete(op, (n) => (n === 'workspace_id' ? a.tenant.workspaceId : undefined));
    for (const scope of SCOPES) {
      jobs.push(async () => {
        const reply = await call(app.url, op.method.toUpperCase(), path, {
          token: tokens.get(scope),
        });
        const refused = reply.status === 403 && reply.body?.code === 'insufficient_scope';
        const v = violation(reply);
        if (v) found.push(`${op.operationId} with ${scope}: ${v}`);
        if (scope === required && refused)
          found.push(`${op.operationId} refused its own scope ${scope}`);
        if (scope !== required && !refused)
          found.push(`${op.operationId} let ${scope} through: ${reply.status}`);
        if (refused && JSON.stringify(reply.body.required_scopes) !== JSON.stringify([required]))
          found.push(
            `${op.operationId}: required_scopes ${JSON.stringify(reply.body.required_scopes)}`,
          );
      });
    }
  }
  await inParallel(jobs);
  noViolations(t, found, 'scope matrix');
  t.log(`scope matrix: ${jobs.length} checks over ${scoped.length} operations`);
});

test('bad credentials answer 401 problem on every operation that needs a token', async (t) => {
  const revoked = await createToken(app.services.db, a.tenant, ['audits:read']);
  const revoke = await call(
    app.url,
    'DELETE',
    `/v1/workspaces/${a.tenant.workspaceId}/tokens/${revoked.id}`,
    { token: a.tenant.token },
  );
  t.is(revoke.status, 200, revoke.text);
  const credentials: Array<[string, Record<string, string>, string]> = [
    ['none', {}, 'authentication_required'],
    ['not a bearer token', { Authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_token'],
    ['malformed', { Authorization: 'Bearer nope' }, 'invalid_token'],
    ['NUL in the token', { Authorization: 'Bearer aat_x%00' }, 'invalid_token'],
    [
      'unknown',
      { Authorization: `Bearer aat_${'a'.repeat(12)}_${'b'.repeat(43)}` },
      'invalid_token',
    ],
    ['revoked', { Authorization: `Bearer ${revoked.token}` }, 'invalid_token'],
  ];
  const found: string[] = [];
  const jobs: Array<() => Promise<void>> = [];
  for (const op of OPERATIONS.filter((o) => o.access.kind !== 'public')) {
    const path = concrete(op, (n) => a.ids[n]?.[0]);
    for (const [label, headers, code] of credentials) {
      jobs.push(async () => {
        const reply = await call(app.url, op.method.toUpperCase(), path, { headers });
        if (reply.status !== 401 || reply.body?.code !== code || !isProblem(reply))
          found.push(
            `${op.operationId} with ${label}: ${reply.status} ${reply.text.slice(0, 200)}`,
          );
        if (!/^Bearer\b/.test(reply.headers.get('www-authenticate') ?? ''))
          found.push(`${op.operationId} with ${label}: no WWW-Authenticate challenge`);
      });
    }
  }
  await inParallel(jobs);
  noViolations(t, found, 'bad credentials');
  t.log(`bad credentials: ${jobs.length} checks`);
});

test('seeded fuzz of every operation: no 5xx, and every 4xx is problem+json', async (t) => {
  // The fuzz token holds every scope; its own id is in no pool, so it never revokes itself.
  const fuzzer = await createTenant(app.services.db);
  const fuzzWorkspace = await seed(fuzzer);
  const pools = {
    workspaceId: fuzzer.workspaceId,
    own: fuzzWorkspace.ids,
    // Its own resources, and the other workspaces' (which must stay out of reach).
    byParam: Object.fromEntries(
      Object.keys(fuzzWorkspace.ids).map((k) => [
        k,
        [...fuzzWorkspace.ids[k]!, ...a.ids[k]!, ...b.ids[k]!],
      ]),
    ),
    uuids: [...Object.values(fuzzWorkspace.ids), ...Object.values(a.ids)].flat(),
  };
  const perOperation = Math.max(1, Math.ceil(FUZZ_CASES / OPERATIONS.length));
  const jobs: Array<() => Promise<Reply>> = [];
  const sent: Array<{ op: AnyOperation; request: FuzzRequest }> = [];
  OPERATIONS.forEach((op, i) => {
    const requests = fc.sample(requestArb(op, pools), {
      seed: FUZZ_SEED + i,
      numRuns: perOperation,
    });
    for (const request of requests) {
      sent.push({ op, request });
      jobs.push(() =>
        call(
          app.url,
          op.method.toUpperCase(),
          `${request.path}${request.query ? `?${request.query}` : ''}`,
          {
            token: fuzzer.token,
            ...(request.body
              ? { raw: request.body.text, headers: { 'Content-Type': request.body.contentType } }
              : {}),
          },
        ).catch((err: unknown): Reply => ({
          status: 599,
          headers: new Headers(),
          body: undefined,
          text: `request failed: ${String(err)}`,
        })),
      );
    }
  });
  const replies = await inParallel(jobs);
  const byStatus: Record<string, number> = {};
  const found: string[] = [];
  let serverErrors = 0;
  let nonProblem = 0;
  replies.forEach((reply, i) => {
    byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;
    const v = violation(reply);
    if (!v) return;
    if (reply.status >= 500) serverErrors++;
    else nonProblem++;
    const { op, request } = sent[i]!;
    found.push(
      `${op.operationId} ${op.method.toUpperCase()} ${request.path}?${request.query.slice(0, 200)} body=${String(request.body?.text ?? '').slice(0, 300)} -> ${v}`,
    );
  });
  const reached = new Set(replies.map((r, i) => (r.status < 400 ? sent[i]!.op.operationId : '')));
  reached.delete('');
  t.log(
    `fuzz: ${replies.length} requests over ${OPERATIONS.length} operations (seed ${FUZZ_SEED}), ${serverErrors} 5xx, ${nonProblem} non-problem 4xx; statuses ${JSON.stringify(byStatus)}; ${reached.size} operations answered a success`,
  );
  noViolations(t, found, 'fuzz');
  // The fuzz reaches past validation: a good share of requests succeed.
  t.true(reached.size >= OPERATIONS.length / 2, `only ${reached.size} operations ever succeeded`);
  // No client input made an error-level log line.
  const errors = app
    .logs()
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l));
  t.deepEqual(errors.slice(0, 5), [], `${errors.length} error-level log lines`);
});
