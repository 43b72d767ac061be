/**
 * The pure rules of the GitHub and GitLab integrations: signatures, what each webhook asks for,
 * sealed secrets, the status a gate makes and the comment's escaping of hostile strings.
 */
import crypto from 'node:crypto';
import test from 'ava';
import {
  githubAction,
  githubSignatureValid,
  gitlabAction,
  gitlabTokenValid,
} from '../domain/integrations/webhooks';
import { SecretBox, sealContext } from '../domain/integrations/sealed';
import { apiBaseUrlProblem } from '../domain/integrations/endpoint';
import {
  ANNOTATIONS_MAX,
  checkRunOf,
  commentBody,
  githubState,
  gitlabState,
  statusOf,
  FAILING_OUTCOMES,
} from '../domain/integrations/publication';
import type { AuditGate } from '../domain/changes/service';

const SHA = 'a'.repeat(40);
const pr = (action: string, extra: Record<string, unknown> = {}) => ({
  action,
  number: 5,
  pull_request: { number: 5, head: { sha: SHA, ref: 'feature/x' }, base: { ref: 'main' } },
  repository: { full_name: 'Octo/Shop' },
  ...extra,
});

test('GitHub signature: HMAC-SHA256 of the exact bytes, anything else refused', (t) => {
  const body = Buffer.from('{"a":1}');
  const good = `sha256=${crypto.createHmac('sha256', 'secret').update(body).digest('hex')}`;
  t.true(githubSignatureValid('secret', body, good));
  t.true(githubSignatureValid('secret', body, good.toUpperCase().replace('SHA256', 'sha256')));
  t.false(githubSignatureValid('secret', Buffer.from('{"a":1} '), good), 'one byte more');
  t.false(githubSignatureValid('other', body, good));
  t.false(githubSignatureValid('secret', body, ''));
  t.false(githubSignatureValid('secret', body, good.slice(0, -1)), 'short');
  t.false(githubSignatureValid('secret', body, `sha1=${good.slice(7)}`));
  t.true(gitlabTokenValid('tok', 'tok'));
  t.false(gitlabTokenValid('tok', 'tok '));
  t.false(gitlabTokenValid('tok', ''));
});

test('GitHub events: which pull request actions audit, close or are ignored', (t) => {
  t.like(githubAction('pull_request', pr('opened'), 'octo/shop', 'main'), {
    kind: 'pull_request',
    number: 5,
    headSha: SHA,
    headRef: 'feature/x',
    originRef: 'github:octo/shop#5',
  });
  for (const a of ['synchronize', 'reopened'])
    t.is(githubAction('pull_request', pr(a), 'octo/shop', 'main').kind, 'pull_request');
  t.is(githubAction('pull_request', pr('closed'), 'octo/shop', 'main').kind, 'close');
  t.is(githubAction('pull_request', pr('edited'), 'octo/shop', 'main').kind, 'ignore');
  t.is(githubAction('issues', pr('opened'), 'octo/shop', 'main').kind, 'ignore');
  t.is(githubAction('pull_request', pr('opened'), 'octo/other', 'main').kind, 'ignore');
  // Hostile or broken payload values never reach an audit.
  const bad = (p: unknown) => githubAction('pull_request', p, 'octo/shop', 'main').kind;
  t.is(bad([]), 'invalid');
  t.is(
    bad(
      pr('opened', {
        pull_request: { number: 5, head: { sha: 'HEAD', ref: 'x' }, base: { ref: 'main' } },
      }),
    ),
    'invalid',
  );
  t.is(
    bad(
      pr('opened', {
        pull_request: {
          number: 5,
          head: { sha: SHA, ref: '--upload-pack=x' },
          base: { ref: 'main' },
        },
      }),
    ),
    'invalid',
  );
  t.is(bad(pr('opened', { number: -1, pull_request: { number: 0 } })), 'invalid');
  // Pushes: the default branch is audited, other branches (their pull requests are) and deletions not.
  const push = (ref: string, after = SHA, extra = {}) =>
    githubAction(
      'push',
      { ref, after, repository: { full_name: 'octo/shop', default_branch: 'main' }, ...extra },
      'octo/shop',
      'trunk',
    );
  t.like(push('refs/heads/main'), { kind: 'push', branch: 'main', sha: SHA });
  t.is(push('refs/heads/feature/x').kind, 'ignore');
  t.is(push('refs/tags/v1').kind, 'ignore');
  t.is(push('refs/heads/main', '0'.repeat(40)).kind, 'ignore');
  t.is(push('refs/heads/main', 'zz').kind, 'invalid');
});

test('GitLab events: merge request actions and project matching by path or id', (t) => {
  const mr = (
    action: string,
    extra: Record<string, unknown> = {},
    project: unknown = { id: 9, path_with_namespace: 'g/s' },
  ) => ({
    project,
    object_attributes: {
      iid: 2,
      action,
      source_branch: 'f',
      target_branch: 'main',
      last_commit: { id: SHA },
      ...extra,
    },
  });
  t.like(gitlabAction('Merge Request Hook', mr('open'), 'g/s', 'main'), {
    kind: 'pull_request',
    originRef: 'gitlab:g/s!2',
  });
  t.like(gitlabAction('Merge Request Hook', mr('open'), '9', 'main'), {
    kind: 'pull_request',
    originRef: 'gitlab:9!2',
  });
  t.is(gitlabAction('Merge Request Hook', mr('update'), 'g/s', 'main').kind, 'ignore');
  t.is(
    gitlabAction('Merge Request Hook', mr('update', { oldrev: SHA }), 'g/s', 'main').kind,
    'pull_request',
  );
  t.is(gitlabAction('Merge Request Hook', mr('merge'), 'g/s', 'main').kind, 'close');
  t.is(gitlabAction('Merge Request Hook', mr('open'), 'g/other', 'main').kind, 'ignore');
  t.is(gitlabAction('Note Hook', mr('open'), 'g/s', 'main').kind, 'ignore');
  t.is(gitlabAction('Merge Request Hook', mr('open', {}, null), 'g/s', 'main').kind, 'invalid');
});

test('sealed secrets: open under the sealing key and context only; rotation keeps old ones readable', (t) => {
  const k1 = 'x'.repeat(32);
  const k2 = 'y'.repeat(32);
  const sealed = new SecretBox([k1]).seal('ghp_token', sealContext('i1', 'token'));
  t.false(sealed.includes('ghp_token'));
  t.is(new SecretBox([k1]).open(sealed, sealContext('i1', 'token')), 'ghp_token');
  t.is(new SecretBox([k2, k1]).open(sealed, sealContext('i1', 'token')), 'ghp_token', 'rotated');
  t.throws(
    () => new SecretBox([k1]).open(sealed, sealContext('i2', 'token')),
    undefined,
    'another row',
  );
  t.throws(() => new SecretBox([k1]).open(sealed, sealContext('i1', 'webhook_secret')));
  t.throws(() => new SecretBox([k2]).open(sealed, sealContext('i1', 'token')), {
    message: /no longer configured/,
  });
  const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
  t.throws(() => new SecretBox([k1]).open(tampered, sealContext('i1', 'token')));
  t.not(new SecretBox([k1]).seal('same', 'c'), new SecretBox([k1]).seal('same', 'c'), 'fresh IV');
});

test('API base URL: the SSRF rules of repository sources', (t) => {
  const ws = { id: 'w', slug: 'w' };
  const policy = {
    localWorkspaces: [],
    sshWorkspaces: {},
    allowedHosts: ['10.1.2.3'],
    protectedPaths: [],
    exemptPaths: [],
  };
  const problem = (u: string) => apiBaseUrlProblem(u, ws, policy);
  t.is(problem('https://api.github.com'), null);
  t.is(problem('https://gitlab.example.com/api/v4'), null);
  t.is(problem('http://10.1.2.3:8080/api/v4'), null, 'allow-listed: http too');
  for (const bad of [
    'http://api.github.com',
    'https://127.0.0.1',
    'https://169.254.169.254/latest',
    'https://localhost',
    'https://metadata.goog',
    'https://[::1]/',
    'https://2130706433/',
    'https://u:p@api.github.com',
    'https://api.github.com/?x=1',
    'file:///etc/passwd',
    'ftp://api.github.com',
    'not a url',
  ])
    t.not(problem(bad), null, bad);
});

const gate = (over: Partial<AuditGate> = {}): AuditGate => ({
  audit_id: 'a1',
  repository_id: 'r1',
  current_snapshot_id: 's2',
  previous_snapshot_id: 's1',
  outcome: 'blocked',
  policy_enabled: true,
  policy_version: 1,
  coverage_comparable: true,
  reasons: [
    {
      code: 'x',
      text: 'baseline: <img src=x onerror=alert(1)> **bold** [link](http://evil)',
      rule_id: null,
      key: null,
      evidence_ids: [],
    },
  ],
  changes: [
    {
      change_type: 'relationship_added',
      key: 'connects_to:service:a`|`->datastore:b',
      label: '<script>alert(1)</script> | ![x](http://evil/x.png)',
      kind: 'relationship',
      consequence: 'blocked',
      change_fields: [],
      evidence_ids: [],
      owner_hint: '@team <b>',
      source_key: null,
      target_key: null,
    } as any,
  ],
  counts: { blocked: 1, review: 0 },
  evaluated_at: '2026-11-26T00:00:00Z',
  ...over,
});

test('status: the gate outcome under fail_on; an audit without a gate is an error', (t) => {
  const audit = {
    id: 'a1',
    status: 'completed',
    error_code: null,
    commit_sha: SHA,
    branch_ref: 'f',
  };
  t.is(statusOf(audit, gate(), FAILING_OUTCOMES).state, 'failure');
  t.is(statusOf(audit, gate(), ['review']).state, 'success');
  t.is(statusOf(audit, gate({ outcome: 'pass' }), FAILING_OUTCOMES).state, 'success');
  t.is(statusOf(audit, null, FAILING_OUTCOMES).state, 'error');
  const failed = statusOf(
    { ...audit, status: 'failed', error_code: 'x'.repeat(300) },
    null,
    FAILING_OUTCOMES,
  );
  t.is(failed.state, 'error');
  t.is(failed.description.length, 140);
});

test('the comment shows hostile repository strings as text: no HTML, link, image or table break', (t) => {
  const body = commentBody({
    integrationId: 'i1',
    provider: 'github',
    audit: {
      id: 'a1',
      status: 'completed',
      error_code: null,
      commit_sha: SHA,
      branch_ref: 'feature/<b>',
    },
    gate: gate(),
    locations: {
      'connects_to:service:a`|`->datastore:b': { path: 'src/<x>|y.ts', start_line: 3, end_line: 3 },
    },
    status: { state: 'failure', description: 'gate blocked' },
    auditUrl: null,
  });
  t.true(body.startsWith('<!-- archaudit:gate integration=i1 -->\n'));
  const outsideCode = body
    .split('\n')
    .slice(1)
    .join('\n')
    .replace(/(`+)[^`]*?\1/g, '');
  t.false(/<(script|img|b)\b/i.test(outsideCode), outsideCode);
  t.false(/(?<!\\)\]\(/.test(outsideCode), 'no link');
  t.false(outsideCode.includes('!['), 'no image');
  t.true(body.includes('&lt;script&gt;'));
  // Every table row keeps its 4 cells.
  for (const row of body.split('\n').filter((l) => l.startsWith('| ')))
    t.is(row.replace(/\\\|/g, '').split('|').length - 2, 4, row);
});

test('a withdrawn audit publishes no verdict: cancelled (GitHub error, GitLab canceled), no annotation', (t) => {
  const audit = { id: 'a1', status: 'running', error_code: null, commit_sha: SHA, branch_ref: 'f' };
  const status = statusOf(audit, gate(), FAILING_OUTCOMES, 'superseded by bbbbbbbbbbbb');
  t.is(status.state, 'cancelled');
  t.is(status.description, 'not audited to the end: superseded by bbbbbbbbbbbb');
  t.is(githubState(status.state), 'error');
  t.is(gitlabState(status.state), 'canceled');
  const check = checkRunOf({
    integrationId: 'i1',
    provider: 'github',
    audit,
    gate: gate(),
    locations: {
      'connects_to:service:a`|`->datastore:b': { path: 'a.ts', start_line: 1, end_line: 1 },
    },
    status,
    auditUrl: null,
    withdrawn: 'superseded by bbbbbbbbbbbb',
  });
  t.is(check.conclusion, 'cancelled');
  t.deepEqual(check.annotations, []);
  t.regex(check.output.summary, /no verdict/);
});

test('check run: a summary escaped for Markdown, plain annotations at the evidence, bounded', (t) => {
  const hostile = gate().changes[0]!;
  const many = Array.from({ length: ANNOTATIONS_MAX + 20 }, (_, i) => ({
    ...hostile,
    key: `${hostile.key}${i}`,
    consequence: (i % 2 ? 'review' : 'blocked') as 'review' | 'blocked',
  }));
  const locations = Object.fromEntries(
    many.map((c, i) => [
      c.key,
      { path: `src/\u202e<x>${i}.ts`, start_line: i % 3 === 0 ? 0 : i, end_line: i },
    ]),
  );
  const check = checkRunOf({
    integrationId: 'i1',
    provider: 'github',
    audit: { id: 'a1', status: 'completed', error_code: null, commit_sha: SHA, branch_ref: 'f' },
    gate: gate({ changes: [...many, { ...hostile, key: 'no-location', consequence: 'blocked' }] }),
    locations,
    status: { state: 'failure', description: 'gate blocked (1 blocked)' },
    auditUrl: null,
  });
  t.is(check.conclusion, 'failure');
  t.is(check.output.title, 'gate blocked (1 blocked)');
  t.is(check.annotations.length, ANNOTATIONS_MAX, 'at most ANNOTATIONS_MAX, each with a location');
  t.like(check.annotations[0], { annotation_level: 'failure', start_line: 1, end_line: 1 });
  t.like(check.annotations[1], { annotation_level: 'warning', start_line: 1, end_line: 1 });
  for (const a of check.annotations) {
    t.false(/[\u0000-\u001f\u202e]/.test(a.path + a.title), a.path);
    t.true(a.start_line >= 1 && a.end_line >= a.start_line);
    t.true(a.title.length <= 255);
  }
  // The summary is Markdown: the hostile label and reason stay text.
  const outsideCode = check.output.summary.replace(/(`+)[^`]*?\1/g, '');
  t.false(/<(script|img)\b/i.test(outsideCode), outsideCode);
  t.false(/(?<!\\)\]\(/.test(outsideCode), 'no link');
  t.true(check.output.summary.length <= 65_535);
});

test('the comment of a closed pull request says so above its last verdict', (t) => {
  const body = commentBody({
    integrationId: 'i1',
    provider: 'gitlab',
    audit: { id: 'a1', status: 'completed', error_code: null, commit_sha: SHA, branch_ref: 'f' },
    gate: gate(),
    locations: {},
    status: { state: 'failure', description: 'gate blocked' },
    auditUrl: null,
    closed: 'merged',
  });
  t.regex(body.split('\n')[1]!, /^\*\*This merge request was merged\*\*/);
  t.regex(body, /Architecture gate is blocked/);
  t.regex(body, /· final<\/sub>$/);
});
