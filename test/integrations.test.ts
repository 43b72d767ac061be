/**
 * GitHub and GitLab end to end on the real stack (API, worker, Temporal, PostgreSQL, real git
 * repositories) against a fake forge API on loopback: a signed pull request webhook starts the
 * audit, the gate is computed against the default branch at the merge-base, one commit status
 * and one comment are posted; a new push edits the same comment; a replayed delivery and a bad
 * signature start nothing; the forge being down delays the publication, not the audit.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, type TestRepo } from './helpers/git';
import { call, isProblem } from './helpers/http';
import { startFakeForge, type FakeForge } from './helpers/fake-forge';
import { CHANGES_V1, CHANGES_V2 } from './fixtures/changes-repo';
import { WEBHOOK_BODY_LIMIT_BYTES } from '../domain/integrations/webhooks';

const KEY = 'k'.repeat(40);
const GITHUB_TOKEN = 'ghp_' + 'a'.repeat(32) + 'WXYZ';
const GITLAB_TOKEN = 'glpat-' + 'b'.repeat(20);
const GITHUB_SECRET = 'github-webhook-secret-0123456789';
const GITLAB_SECRET = 'gitlab-webhook-secret-0123456789';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let forge: FakeForge;
let githubRepoId: string;
let gitlabRepoId: string;
let githubHook: string;
let gitlabHook: string;
let mergeBase: string;
let head1: string;

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;
const api = (method: string, path: string, body?: unknown) =>
  call(h.app.url, method, `${ws()}${path}`, { token: tenant.token, body });

const sign = (raw: string, secret = GITHUB_SECRET) =>
  `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`;

function githubDelivery(
  event: string,
  payload: unknown,
  delivery = crypto.randomUUID(),
  secret?: string,
) {
  const raw = JSON.stringify(payload);
  return call(h.app.url, 'POST', githubHook, {
    raw,
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': event,
      'X-GitHub-Delivery': delivery,
      'X-Hub-Signature-256': sign(raw, secret),
    },
  });
}

function gitlabDelivery(
  event: string,
  payload: unknown,
  delivery = crypto.randomUUID(),
  token = GITLAB_SECRET,
) {
  return call(h.app.url, 'POST', gitlabHook, {
    raw: JSON.stringify(payload),
    headers: {
      'Content-Type': 'application/json',
      'X-Gitlab-Event': event,
      'X-Gitlab-Event-UUID': delivery,
      'X-Gitlab-Token': token,
    },
  });
}

const pullRequest = (action: string, sha: string) => ({
  action,
  number: 7,
  pull_request: {
    number: 7,
    head: { sha, ref: 'feature/reports' },
    base: { ref: 'main', sha: mergeBase },
  },
  repository: { full_name: 'octo/shop', default_branch: 'main' },
});

const mergeRequest = (action: string, sha: string, extra: Record<string, unknown> = {}) => ({
  object_kind: 'merge_request',
  project: { id: 42, path_with_namespace: 'group/shop', default_branch: 'main' },
  object_attributes: {
    iid: 3,
    action,
    source_branch: 'feature/reports',
    target_branch: 'main',
    last_commit: { id: sha },
    ...extra,
  },
});

async function completed(auditId: string) {
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, auditId, 300_000);
  if (done.body.status !== 'completed') throw new Error(JSON.stringify(done.body.stages));
  return done.body;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const auditsOf = async (repositoryId: string) =>
  (await api('GET', `/audits?repository_id=${repositoryId}&limit=100`)).body.items as any[];

test.before(async () => {
  forge = await startFakeForge({ github: GITHUB_TOKEN, gitlab: GITLAB_TOKEN });
  h = await startAuditHarness({
    config: { integrationSecretKeys: [KEY], repositoryAllowedHosts: ['127.0.0.1'] },
  });
  tenant = await createTenant(h.app.services.db, { login: 'alice' });
  repo = createRepo(CHANGES_V1);
  mergeBase = repo.git('rev-parse', 'HEAD');
  repo.git('checkout', '--quiet', '-b', 'feature/reports');
  head1 = repo.commit(CHANGES_V2, 'reports service, payments API, legacy-db retired');
  repo.git('checkout', '--quiet', 'main');
  repo.commit({ 'NOTES.md': 'main moved on\n' }, 'notes');
  for (const name of ['shop-github', 'shop-gitlab']) {
    const created = await api('POST', '/repositories', { name, url: `file://${repo.dir}` });
    if (created.status !== 201) throw new Error(created.text);
    if (name === 'shop-github') githubRepoId = created.body.id;
    else gitlabRepoId = created.body.id;
  }
  const gh = await api('PUT', `/repositories/${githubRepoId}/integration`, {
    provider: 'github',
    api_base_url: forge.url,
    project: 'octo/shop',
    token: GITHUB_TOKEN,
    webhook_secret: GITHUB_SECRET,
  });
  if (gh.status !== 200) throw new Error(gh.text);
  githubHook = gh.body.webhook_url;
  const gl = await api('PUT', `/repositories/${gitlabRepoId}/integration`, {
    provider: 'gitlab',
    api_base_url: `${forge.url}/api/v4`,
    project: 'group/shop',
    token: GITLAB_TOKEN,
    webhook_secret: GITLAB_SECRET,
  });
  if (gl.status !== 200) throw new Error(gl.text);
  gitlabHook = gl.body.webhook_url;
});

test.after.always(async () => {
  await h?.close();
  await forge?.close();
  repo?.remove();
});

test.serial('settings keep the secrets write-only and sealed at rest', async (t) => {
  const got = await api('GET', `/repositories/${githubRepoId}/integration`);
  t.is(got.status, 200);
  t.like(got.body, {
    provider: 'github',
    api_base_url: forge.url,
    project: 'octo/shop',
    token_set: true,
    token_last4: 'WXYZ',
    webhook_secret_set: true,
    fail_on: ['review', 'blocked', 'insufficient_evidence'],
  });
  t.is(got.body.webhook_url, `/v1/webhooks/github/${got.body.id}`);
  t.false(got.text.includes(GITHUB_TOKEN) || got.text.includes(GITHUB_SECRET));
  const row = await h.app.services.db('repository_integrations').where({ id: got.body.id }).first();
  const stored = JSON.stringify(row);
  t.false(stored.includes(GITHUB_TOKEN), 'the token is not stored in clear');
  t.false(stored.includes(GITHUB_SECRET), 'the webhook secret is not stored in clear');
  t.regex(row.token_sealed, /^v1\.[0-9a-f]{8}\./);
});

test.serial('settings bounds: secrets, base URL, creation needs both secrets', async (t) => {
  const put = (body: Record<string, unknown>) =>
    api('PUT', `/repositories/${githubRepoId}/integration`, {
      provider: 'github',
      api_base_url: forge.url,
      project: 'octo/shop',
      ...body,
    });
  // Left out, the secrets are kept.
  const kept = await put({});
  t.is(kept.status, 200);
  t.true(kept.body.token_set);
  t.is(kept.body.token_last4, 'WXYZ');
  // The webhook secret: 16 characters at least, 1000 at most.
  t.is((await put({ webhook_secret: 's'.repeat(15) })).status, 400);
  t.is((await put({ token: 't'.repeat(1001) })).status, 400);
  const internal = await put({ api_base_url: 'https://169.254.169.254/latest' });
  t.is(internal.status, 400);
  t.true(isProblem(internal));
  t.regex(internal.text, /api_base_url/);
  t.is(
    (await put({ api_base_url: 'http://api.github.com' })).status,
    400,
    'http only when allow-listed',
  );
  t.is((await put({ api_base_url: 'https://user:pw@api.github.com' })).status, 400);
  t.is((await put({ expected_version: 1 })).status, 409);
  // The last round restores the secrets used below (they are kept across updates).
  const restored = await put({ webhook_secret: GITHUB_SECRET, token: GITHUB_TOKEN });
  t.is(restored.status, 200);
  // A repository without an integration: 404; creating one needs both secrets.
  const other = await api('POST', '/repositories', { name: 'bare', url: `file://${repo.dir}` });
  t.is((await api('GET', `/repositories/${other.body.id}/integration`)).status, 404);
  const missing = await api('PUT', `/repositories/${other.body.id}/integration`, {
    provider: 'gitlab',
    project: '42',
  });
  t.is(missing.status, 400);
  t.deepEqual(missing.body.errors.map((e: any) => e.path).sort(), ['/token', '/webhook_secret']);
});

test.serial('a bad signature is 401 and starts nothing', async (t) => {
  const before = (await auditsOf(githubRepoId)).length;
  const forged = await githubDelivery(
    'pull_request',
    pullRequest('opened', head1),
    undefined,
    'wrong-secret-0123456789',
  );
  t.is(forged.status, 401);
  t.true(isProblem(forged));
  t.is(forged.body.code, 'invalid_webhook_signature');
  const unsigned = await call(h.app.url, 'POST', githubHook, {
    raw: JSON.stringify(pullRequest('opened', head1)),
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'pull_request',
      'X-GitHub-Delivery': 'd-1',
    },
  });
  t.is(unsigned.status, 401);
  const gitlab = await gitlabDelivery(
    'Merge Request Hook',
    mergeRequest('open', head1),
    undefined,
    'not-the-secret',
  );
  t.is(gitlab.status, 401);
  t.is((await auditsOf(githubRepoId)).length, before);
  t.is((await auditsOf(gitlabRepoId)).length, 0);
});

test.serial('unknown events are ignored; the body bound holds at its limit', async (t) => {
  const ping = await githubDelivery('ping', { zen: 'hi', repository: { full_name: 'octo/shop' } });
  t.is(ping.status, 202);
  t.like(ping.body, { outcome: 'ignored', audit_id: null, replayed: false });
  const label = await githubDelivery('pull_request', pullRequest('labeled', head1));
  t.like(label.body, { outcome: 'ignored' });
  const otherRepo = await githubDelivery('pull_request', {
    ...pullRequest('opened', head1),
    repository: { full_name: 'someone/else' },
  });
  t.like(otherRepo.body, { outcome: 'ignored' });
  t.regex(otherRepo.body.reason, /another repository/);
  // A signed body of exactly the limit is read (and ignored: a ping), one byte more is 413.
  const pad = (n: number) => {
    const base = JSON.stringify({ zen: '', repository: { full_name: 'octo/shop' } });
    return JSON.stringify({
      zen: 'x'.repeat(n - base.length),
      repository: { full_name: 'octo/shop' },
    });
  };
  const atLimit = pad(WEBHOOK_BODY_LIMIT_BYTES);
  t.is(Buffer.byteLength(atLimit), WEBHOOK_BODY_LIMIT_BYTES);
  const send = (raw: string) =>
    call(h.app.url, 'POST', githubHook, {
      raw,
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'ping',
        'X-GitHub-Delivery': crypto.randomUUID(),
        'X-Hub-Signature-256': sign(raw),
      },
    });
  t.is((await send(atLimit)).status, 202);
  const over = await send(pad(WEBHOOK_BODY_LIMIT_BYTES + 1));
  t.is(over.status, 413);
  t.true(isProblem(over));
  t.is((await auditsOf(githubRepoId)).length, 0);
});

test.serial(
  'a GitHub pull request: audit gated at the merge-base, one status and one comment, edited on the next push, retried while GitHub is down',
  async (t) => {
    const delivery = crypto.randomUUID();
    const opened = await githubDelivery('pull_request', pullRequest('opened', head1), delivery);
    t.is(opened.status, 202, opened.text);
    t.like(opened.body, { outcome: 'started', replayed: false });
    const audit = await completed(opened.body.audit_id);
    t.like(audit, {
      origin: 'webhook',
      origin_ref: 'github:octo/shop#7',
      commit_sha: head1,
      branch_ref: 'feature/reports',
    });
    // Gated against the default branch at the merge-base (its audit ran first).
    const baseline = (await auditsOf(githubRepoId)).find((a) => a.origin === 'baseline');
    t.like(baseline, { commit_sha: mergeBase, status: 'completed' });
    const gate = await api('GET', `/audits/${audit.id}/gate`);
    t.is(gate.body.outcome, 'blocked');
    t.regex(gate.body.reasons[0].text, new RegExp(`merge-base ${mergeBase}`));

    // A replayed delivery answers the same and starts nothing.
    const replay = await githubDelivery('pull_request', pullRequest('opened', head1), delivery);
    t.is(replay.status, 202);
    t.like(replay.body, { outcome: 'started', audit_id: audit.id, replayed: true });
    t.is((await auditsOf(githubRepoId)).filter((a) => a.origin === 'webhook').length, 1);

    const statusCall = await until('the commit status', () =>
      forge.calls.find(
        (c) =>
          c.path.endsWith(`/statuses/${head1}`) && c.status === 201 && c.body.state !== 'pending',
      ),
    );
    // `pending` was posted while the audit ran, before the verdict.
    const head1Statuses = forge.calls.filter(
      (c) => c.path.endsWith(`/statuses/${head1}`) && c.status === 201,
    );
    t.deepEqual(
      head1Statuses.map((c) => c.body.state),
      ['pending', 'failure'],
    );
    t.is(head1Statuses[0]!.body.description, 'architecture audit running');
    t.is(statusCall.path, `/repos/octo/shop/statuses/${head1}`);
    t.like(statusCall.body, { state: 'failure', context: 'archaudit/architecture-gate' });
    t.regex(statusCall.body.description, /^gate blocked/);
    t.true(statusCall.body.description.length <= 140);
    const comment = await until('the comment', () =>
      forge.calls.find(
        (c) => c.method === 'POST' && c.path === '/repos/octo/shop/issues/7/comments',
      ),
    );
    t.is(comment.auth, `Bearer ${GITHUB_TOKEN}`);
    t.regex(
      comment.body.body,
      /^<!-- archaudit:gate integration=[0-9a-f-]{36} -->\n### Architecture gate is blocked/,
    );
    t.regex(
      comment.body.body,
      /connects\\?_to:service:reports->datastore:orders-db|service:reports/,
    );
    const commentId = [...forge.comments.keys()][0]!;

    // GitHub goes down; a new push is audited all the same, and published once it is back.
    forge.down = true;
    repo.git('checkout', '--quiet', 'feature/reports');
    const head2 = repo.commit({ 'README.md': 'reports\n' }, 'docs');
    repo.git('checkout', '--quiet', 'main');
    const pushed = await githubDelivery('pull_request', pullRequest('synchronize', head2));
    t.like(pushed.body, { outcome: 'started' });
    const second = await completed(pushed.body.audit_id);
    t.is(second.commit_sha, head2);
    await until('a refused attempt', () =>
      forge.calls.find((c) => c.path.endsWith(`/statuses/${head2}`) && c.status === 503),
    );
    forge.down = false;
    const status2 = await until('the second status', () =>
      forge.calls.find(
        (c) =>
          c.path.endsWith(`/statuses/${head2}`) && c.status === 201 && c.body.state !== 'pending',
      ),
    );
    // Whatever the order the retries came in, the verdict is the last status of the commit.
    await new Promise((r) => setTimeout(r, 3000));
    t.is(
      forge.calls.filter((c) => c.path.endsWith(`/statuses/${head2}`) && c.status === 201).at(-1)!
        .body.state,
      'failure',
    );
    t.is(status2.body.state, 'failure');
    const edit = await until('the edit', () =>
      forge.calls.find((c) => c.method === 'PATCH' && c.status === 200),
    );
    t.is(edit.path, `/repos/octo/shop/issues/comments/${commentId}`);
    t.regex(forge.comments.get(commentId)!.body, new RegExp(head2.slice(0, 12)));
    t.is(
      forge.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments')).length,
      1,
      'one comment, edited in place',
    );
    t.is(forge.comments.size, 1);
    // The audit never waited on the forge, and no call carried the token elsewhere than its header.
    t.is(second.status, 'completed');
    const publication = await h.app.services
      .db('integration_publications')
      .where({ audit_id: second.id })
      .first();
    t.is(publication.state, 'published');
    t.regex(publication.last_error ?? '', /503/);
    t.false(JSON.stringify(publication).includes(GITHUB_TOKEN));

    // A closed pull request is recorded so.
    const closed = await githubDelivery('pull_request', pullRequest('closed', head2));
    t.like(closed.body, { outcome: 'closed' });
    const deliveries = await api('GET', `/repositories/${githubRepoId}/integration/deliveries`);
    t.is(deliveries.body.items[0].outcome, 'closed');
    const retried = deliveries.body.items.find((d: any) => d.audit_id === second.id);
    t.like(retried, { outcome: 'started', publication_state: 'published' });
    t.regex(retried.publication_error, /answered 503/);
    t.false(deliveries.text.includes(GITHUB_TOKEN));
  },
);

test.serial(
  'a GitLab merge request: status and one note, edited when new commits come',
  async (t) => {
    const opened = await gitlabDelivery('Merge Request Hook', mergeRequest('open', head1));
    t.is(opened.status, 202, opened.text);
    const audit = await completed(opened.body.audit_id);
    t.like(audit, { origin: 'webhook', origin_ref: 'gitlab:group/shop!3', commit_sha: head1 });
    const gate = await api('GET', `/audits/${audit.id}/gate`);
    t.is(gate.body.outcome, 'blocked');
    const status = await until('the GitLab status', () =>
      forge.calls.find(
        (c) =>
          c.path === `/api/v4/projects/group%2Fshop/statuses/${head1}` &&
          c.status === 201 &&
          c.body.state !== 'pending',
      ),
    );
    t.like(status.body, { state: 'failed', name: 'archaudit/architecture-gate' });
    t.is(status.auth, GITLAB_TOKEN);
    const note = await until('the note', () =>
      forge.calls.find(
        (c) =>
          c.method === 'POST' && c.path === '/api/v4/projects/group%2Fshop/merge_requests/3/notes',
      ),
    );
    t.regex(note.body.body, /### Architecture gate is blocked/);

    // An update without new commits (a title change) is ignored; one with new commits re-audits.
    const retitled = await gitlabDelivery('Merge Request Hook', mergeRequest('update', head1));
    t.like(retitled.body, { outcome: 'ignored' });
    const head = repo.git('rev-parse', 'feature/reports');
    const updated = await gitlabDelivery(
      'Merge Request Hook',
      mergeRequest('update', head, { oldrev: head1 }),
    );
    t.like(updated.body, { outcome: 'started' });
    await completed(updated.body.audit_id);
    const put = await until('the note edit', () =>
      forge.calls.find(
        (c) =>
          c.method === 'PUT' &&
          c.path.startsWith('/api/v4/projects/group%2Fshop/merge_requests/3/notes/'),
      ),
    );
    t.is(put.status, 200);
    t.is(
      forge.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/merge_requests/3/notes'))
        .length,
      1,
    );
  },
);

test.serial(
  'a push to the default branch audits it and posts its status; other branches are left to their pull requests',
  async (t) => {
    const tip = repo.git('rev-parse', 'main');
    const push = (ref: string) =>
      githubDelivery('push', {
        ref,
        after: tip,
        repository: { full_name: 'octo/shop', default_branch: 'main' },
      });
    const feature = await push('refs/heads/feature/reports');
    t.like(feature.body, { outcome: 'ignored', audit_id: null });
    const comments = forge.comments.size;
    const main = await push('refs/heads/main');
    t.like(main.body, { outcome: 'started' });
    const audit = await completed(main.body.audit_id);
    t.like(audit, { origin: 'webhook', origin_ref: null, branch_ref: 'main', commit_sha: tip });
    const status = await until('the status of main', () =>
      forge.calls.find(
        (c) =>
          c.path === `/repos/octo/shop/statuses/${tip}` &&
          c.status === 201 &&
          c.body.state !== 'pending',
      ),
    );
    t.regex(status.body.description, /^gate /);
    t.is(forge.comments.size, comments, 'no pull request, no comment');
  },
);

test.serial(
  'a GitHub pull request into a release branch: gated against that branch, a newer push cancels the older audit, check runs with annotations, closing closes its change set',
  async (t) => {
    // release/1 leaves main at the first commit; the hotfix branch leaves release/1.
    repo.git('checkout', '--quiet', '-b', 'release/1', mergeBase);
    const releaseTip = repo.commit({ 'RELEASE.md': '1.x\n' }, 'release 1');
    repo.git('checkout', '--quiet', '-b', 'hotfix/reports');
    const hot1 = repo.commit(CHANGES_V2, 'reports on 1.x');
    const hot2 = repo.commit({ 'HOTFIX.md': 'second push\n' }, 'second push');
    repo.git('checkout', '--quiet', 'main');
    const created = await api('POST', '/repositories', {
      name: 'shop-release',
      url: `file://${repo.dir}`,
    });
    const repositoryId = created.body.id;
    const integration = await api('PUT', `/repositories/${repositoryId}/integration`, {
      provider: 'github',
      api_base_url: forge.url,
      project: 'octo/release',
      token: GITHUB_TOKEN,
      webhook_secret: GITHUB_SECRET,
      publish_as: 'both',
    });
    t.is(integration.status, 200, integration.text);
    t.is(integration.body.publish_as, 'both');
    const hook = integration.body.webhook_url;
    const send = (
      action: string,
      sha: string,
      extra: Record<string, unknown> = {},
      delivery: string = crypto.randomUUID(),
    ) => {
      const raw = JSON.stringify({
        action,
        number: 9,
        pull_request: {
          number: 9,
          head: { sha, ref: 'hotfix/reports' },
          base: { ref: 'release/1', sha: releaseTip },
          ...extra,
        },
        repository: { full_name: 'octo/release', default_branch: 'main' },
      });
      return call(h.app.url, 'POST', hook, {
        raw,
        headers: {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'pull_request',
          'X-GitHub-Delivery': delivery,
          'X-Hub-Signature-256': sign(raw),
        },
      });
    };

    // Two pushes in a row: the second supersedes the first, still running, which is cancelled.
    const first = await send('opened', hot1);
    t.like(first.body, { outcome: 'started' });
    const secondDelivery = crypto.randomUUID();
    const second = await send('synchronize', hot2, {}, secondDelivery);
    t.like(second.body, { outcome: 'started', cancelled_audit_ids: [first.body.audit_id] });
    // Redelivered, it answers the same (with what it cancelled) and does nothing again.
    const replayed = await send('synchronize', hot2, {}, secondDelivery);
    t.like(replayed.body, {
      outcome: 'started',
      audit_id: second.body.audit_id,
      cancelled_audit_ids: [first.body.audit_id],
      replayed: true,
    });
    const cancelled = await waitForAudit(
      h.app.url,
      tenant.token,
      tenant.workspaceId,
      first.body.audit_id,
      300_000,
    );
    t.is(cancelled.body.status, 'cancelled');
    const audit = await completed(second.body.audit_id);

    // Gated against release/1 at its merge-base with the head, not against main.
    t.like(audit.source.base, { ref: 'release/1', merge_base_sha: releaseTip });
    const baseline = (await auditsOf(repositoryId)).find((a) => a.origin === 'baseline');
    t.like(baseline, { commit_sha: releaseTip, branch_ref: 'release/1', status: 'completed' });
    const gate = await api('GET', `/audits/${audit.id}/gate`);
    t.is(gate.body.outcome, 'blocked');
    t.is(
      gate.body.reasons[0].text,
      `baseline: the target branch release/1 at the merge-base ${releaseTip}`,
    );

    // The superseded audit publishes why it has no verdict, on its own commit only.
    const supersededStatus = await until('the superseded status', () =>
      forge.calls.find(
        (c) =>
          c.path === `/repos/octo/release/statuses/${hot1}` &&
          c.status === 201 &&
          c.body.state !== 'pending',
      ),
    );
    t.is(supersededStatus.body.state, 'error');
    t.regex(supersededStatus.body.description, new RegExp(`superseded by ${hot2.slice(0, 12)}`));
    const runOf = (sha: string) =>
      [...forge.checkRuns.values()].find((r) => r.head_sha === sha && r.status === 'completed');
    const cancelledRun = await until('the cancelled check run', () => runOf(hot1));
    t.is(cancelledRun.conclusion, 'cancelled');
    t.is(cancelledRun.annotations.length, 0);

    // The head's check run: blocked, a summary, annotations at the blocking evidence.
    const run = await until('the check run', () => runOf(hot2));
    t.like(run, {
      name: 'archaudit/architecture-gate',
      conclusion: 'failure',
      external_id: audit.id,
    });
    t.regex(run.output!.title!, /^gate blocked/);
    t.regex(run.output!.summary!, /### Architecture gate is blocked/);
    t.true(run.annotations.length > 0);
    t.true(run.annotations.some((a: any) => a.annotation_level === 'failure'));
    for (const a of run.annotations) {
      t.true(typeof a.path === 'string' && a.path.length > 0 && !a.path.startsWith('/'));
      t.true(a.start_line >= 1 && a.end_line >= a.start_line);
      t.regex(a.title, /^(blocked|review): /);
    }
    // One check run per audit (created in progress, completed in place), and a status beside it.
    t.is([...forge.checkRuns.values()].filter((r) => r.head_sha === hot2).length, 1);
    const headStatus = await until('the head status', () =>
      forge.calls.find(
        (c) =>
          c.path === `/repos/octo/release/statuses/${hot2}` &&
          c.status === 201 &&
          c.body.state !== 'pending',
      ),
    );
    t.is(headStatus.body.state, 'failure');
    // The comment carries the head's verdict only; the superseded audit never commented.
    const comment = await until('the comment', () =>
      forge.calls.find(
        (c) => c.method === 'POST' && c.path === '/repos/octo/release/issues/9/comments',
      ),
    );
    t.regex(comment.body.body, new RegExp(audit.id));
    t.false(
      forge.calls.some(
        (c) =>
          c.path.startsWith('/repos/octo/release/issues/') &&
          c.body?.body?.includes(first.body.audit_id),
      ),
    );

    // The observed change set of the pull request, then its closing (merged).
    const sets = async () =>
      (await api('GET', `/repositories/${repositoryId}/change-sets?state=observed`)).body.items;
    const open = (await sets()).find((s: any) => s.change_key === 'github:octo/release#9');
    t.like(open, { source_ref: hot2, closed_at: null, closed_reason: null });
    const before = (await auditsOf(repositoryId)).length;
    const merged = await send('closed', hot2, { merged: true });
    t.like(merged.body, { outcome: 'closed', audit_id: null });
    const closedSet = (await sets()).find((s: any) => s.change_key === 'github:octo/release#9');
    t.is(closedSet.id, open.id);
    t.is(closedSet.closed_reason, 'merged');
    t.truthy(closedSet.closed_at);
    t.is(closedSet.source_ref, hot2, 'it keeps its last head and gate');
    t.is(closedSet.gate_result.outcome, 'blocked');
    t.is((await auditsOf(repositoryId)).length, before, 'no new audit');
    const [commentId] = [...forge.comments].find(([, c]) => c.on === 'issue:9')!;
    await until('the closing note', () =>
      /was merged/.test(forge.comments.get(commentId)!.body) ? true : undefined,
    );
    t.regex(forge.comments.get(commentId)!.body, /Architecture gate is blocked/);
  },
);

test.serial(
  'a GitLab merge request closed while its audit runs: the audit is cancelled, its status canceled',
  async (t) => {
    repo.git('checkout', '--quiet', 'feature/reports');
    const head = repo.commit({ 'LATE.md': 'late\n' }, 'late push');
    repo.git('checkout', '--quiet', 'main');
    const updated = await gitlabDelivery(
      'Merge Request Hook',
      mergeRequest('update', head, { oldrev: head1 }),
    );
    t.like(updated.body, { outcome: 'started' });
    const closed = await gitlabDelivery('Merge Request Hook', mergeRequest('close', head));
    t.like(closed.body, { outcome: 'closed', cancelled_audit_ids: [updated.body.audit_id] });
    const done = await waitForAudit(
      h.app.url,
      tenant.token,
      tenant.workspaceId,
      updated.body.audit_id,
      300_000,
    );
    t.is(done.body.status, 'cancelled');
    const status = await until('the canceled status', () =>
      forge.calls.find(
        (c) =>
          c.path === `/api/v4/projects/group%2Fshop/statuses/${head}` &&
          c.status === 201 &&
          c.body.state !== 'pending',
      ),
    );
    t.is(status.body.state, 'canceled');
    t.regex(status.body.description, /merge request was closed/);
    const set = (
      await api('GET', `/repositories/${gitlabRepoId}/change-sets?state=observed`)
    ).body.items.find((s: any) => s.change_key === 'gitlab:group/shop!3');
    t.is(set.closed_reason, 'closed');
  },
);
