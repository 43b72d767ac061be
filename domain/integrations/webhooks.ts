/**
 * What a GitHub or GitLab webhook asks of us, decided from its event name and payload alone (no
 * I/O): audit a pull request's head (or the default branch after a push), record that a pull
 * request closed, or nothing. Every value taken from a payload is checked (a 40-hex commit, a
 * branch name git accepts, a positive number) before it reaches an audit. Signatures are checked
 * in constant time over the raw body.
 */
import crypto from 'node:crypto';
import { isOtherBranch, refNameProblem } from '../repositories/git-ref';

export const PROVIDERS = ['github', 'gitlab'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The API of github.com and of gitlab.com, when the integration names none. */
export const DEFAULT_API_BASE_URL: Record<Provider, string> = {
  github: 'https://api.github.com',
  gitlab: 'https://gitlab.com/api/v4',
};

/** The largest webhook body read (GitHub caps its payloads at 25 MB; pull request ones are KB). */
export const WEBHOOK_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** Delivery ids are GUIDs on both forges; anything printable up to this length is accepted. */
export const DELIVERY_ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

export type WebhookAction =
  | {
      kind: 'pull_request';
      number: number;
      headSha: string;
      headRef: string;
      baseRef: string;
      /** `github:owner/name#12`, `gitlab:group/project!7`: the audits' origin_ref. */
      originRef: string;
      reason: string;
    }
  | { kind: 'push'; branch: string; sha: string; reason: string }
  | { kind: 'close'; number: number; originRef: string; merged: boolean; reason: string }
  | { kind: 'ignore'; reason: string }
  | { kind: 'invalid'; reason: string };

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const SHA = /^[0-9a-f]{40}$/;
const ZERO_SHA = '0'.repeat(40);

function positive(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 2_147_483_647 ? v : null;
}

function branchOf(v: unknown): string | null {
  const name = str(v);
  return name !== null && refNameProblem(name) === null ? name : null;
}

/** Constant-time equality of two strings (their SHA-256 digests are compared). */
function sameSecret(a: string, b: string): boolean {
  const da = crypto.createHash('sha256').update(a, 'utf8').digest();
  const db = crypto.createHash('sha256').update(b, 'utf8').digest();
  return crypto.timingSafeEqual(da, db);
}

/** GitHub's `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
export function githubSignatureValid(secret: string, body: Buffer, header: string): boolean {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!m) return false;
  const expected = crypto.createHmac('sha256', secret).update(body).digest();
  return crypto.timingSafeEqual(expected, Buffer.from(m[1]!.toLowerCase(), 'hex'));
}

/** GitLab's `X-Gitlab-Token`: the secret itself. */
export function gitlabTokenValid(secret: string, header: string): boolean {
  return header !== '' && sameSecret(secret, header);
}

const sameProject = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A pull request or push event of GitHub, for the repository `project` (`owner/name`). */
export function githubAction(
  event: string,
  payload: unknown,
  project: string,
  defaultBranch: string,
): WebhookAction {
  if (event !== 'pull_request' && event !== 'push')
    return { kind: 'ignore', reason: `event ${event} is not one that starts audits` };
  const p = obj(payload);
  if (!p) return { kind: 'invalid', reason: 'the payload is not a JSON object' };
  const repo = str(obj(p.repository)?.full_name);
  if (repo === null) return { kind: 'invalid', reason: 'repository.full_name is missing' };
  if (!sameProject(repo, project))
    return {
      kind: 'ignore',
      reason: `the event is for another repository than ${project}`,
    };
  if (event === 'push') {
    const ref = str(p.ref) ?? '';
    const sha = str(p.after) ?? '';
    if (p.deleted === true || sha === ZERO_SHA)
      return { kind: 'ignore', reason: 'a deleted ref is not audited' };
    return pushAction(ref, sha, str(obj(p.repository)?.default_branch) ?? defaultBranch);
  }
  const action = str(p.action) ?? '';
  const pr = obj(p.pull_request);
  const number = positive(p.number) ?? positive(pr?.number);
  if (!pr || number === null) return { kind: 'invalid', reason: 'pull_request.number is missing' };
  const originRef = `github:${project}#${number}`;
  if (action === 'closed') {
    const merged = pr.merged === true;
    return {
      kind: 'close',
      number,
      originRef,
      merged,
      reason: `pull request #${number} ${merged ? 'merged' : 'closed'}`,
    };
  }
  if (!['opened', 'synchronize', 'reopened'].includes(action))
    return { kind: 'ignore', reason: `pull_request action ${action} does not change the code` };
  const head = obj(pr.head);
  const base = obj(pr.base);
  return prAction(
    number,
    str(head?.sha),
    head?.ref,
    base?.ref,
    originRef,
    `GitHub pull request #${number} ${action}`,
  );
}

/** A merge request or push event of GitLab, for `project` (its id or `group/name` path). */
export function gitlabAction(
  event: string,
  payload: unknown,
  project: string,
  defaultBranch: string,
): WebhookAction {
  if (event !== 'Merge Request Hook' && event !== 'Push Hook')
    return { kind: 'ignore', reason: `event ${event} is not one that starts audits` };
  const p = obj(payload);
  if (!p) return { kind: 'invalid', reason: 'the payload is not a JSON object' };
  const proj = obj(p.project);
  const path = str(proj?.path_with_namespace);
  const id = positive(proj?.id) ?? positive(p.project_id);
  if (path === null && id === null) return { kind: 'invalid', reason: 'project is missing' };
  if (!(path !== null && sameProject(path, project)) && String(id) !== project)
    return { kind: 'ignore', reason: `the event is for another project than ${project}` };
  if (event === 'Push Hook') {
    const sha = str(p.checkout_sha) ?? str(p.after) ?? '';
    if (sha === ZERO_SHA || str(p.after) === ZERO_SHA)
      return { kind: 'ignore', reason: 'a deleted ref is not audited' };
    return pushAction(str(p.ref) ?? '', sha, str(proj?.default_branch) ?? defaultBranch);
  }
  const attrs = obj(p.object_attributes);
  const iid = positive(attrs?.iid);
  if (!attrs || iid === null)
    return { kind: 'invalid', reason: 'object_attributes.iid is missing' };
  const action = str(attrs.action) ?? '';
  const originRef = `gitlab:${project}!${iid}`;
  if (action === 'close' || action === 'merge')
    return {
      kind: 'close',
      number: iid,
      originRef,
      merged: action === 'merge',
      reason: `merge request !${iid} ${action}d`,
    };
  // An update without `oldrev` changed the title, labels or reviewers, not the code.
  const newCommits = action === 'update' && str(attrs.oldrev) !== null;
  if (!['open', 'reopen'].includes(action) && !newCommits)
    return {
      kind: 'ignore',
      reason: `merge_request action ${action || 'none'} brings no new commits`,
    };
  return prAction(
    iid,
    str(obj(attrs.last_commit)?.id),
    attrs.source_branch,
    attrs.target_branch,
    originRef,
    `GitLab merge request !${iid} ${action}`,
  );
}

function prAction(
  number: number,
  headSha: string | null,
  headRef: unknown,
  baseRef: unknown,
  originRef: string,
  reason: string,
): WebhookAction {
  const head = branchOf(headRef);
  const base = branchOf(baseRef);
  if (headSha === null || !SHA.test(headSha))
    return { kind: 'invalid', reason: 'the head commit is not a 40-hex sha' };
  if (head === null || base === null)
    return { kind: 'invalid', reason: 'the head or base branch is not a valid branch name' };
  return { kind: 'pull_request', number, headSha, headRef: head, baseRef: base, originRef, reason };
}

function pushAction(ref: string, sha: string, defaultBranch: string): WebhookAction {
  if (!SHA.test(sha)) return { kind: 'invalid', reason: 'the pushed commit is not a 40-hex sha' };
  if (!ref.startsWith('refs/heads/'))
    return { kind: 'ignore', reason: `a push to ${ref} (not a branch) is not audited` };
  const branch = ref.slice('refs/heads/'.length);
  if (branchOf(branch) === null)
    return { kind: 'invalid', reason: 'the pushed branch is not a valid branch name' };
  // Other branches are gated through their pull requests (an audit per push would double them).
  if (isOtherBranch(branch, defaultBranch))
    return {
      kind: 'ignore',
      reason: `a push to ${branch}, not the default branch ${defaultBranch}: pull request events gate other branches`,
    };
  return { kind: 'push', branch, sha, reason: `push to the default branch ${branch}` };
}
