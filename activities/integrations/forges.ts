/**
 * GitHub's and GitLab's REST calls for what we publish: a commit status or a GitHub check run
 * (created once per audit, found again by its external id, then updated), and one comment (GitLab:
 * note) per pull request found again by its id or, failing that, by its hidden marker, then
 * edited in place. Paths are built from the integration's own project, never from a payload.
 */
import type { SourcePolicy } from '../../domain/repositories/source-policy';
import {
  STATUS_CONTEXT,
  githubState,
  gitlabState,
  type CheckAnnotation,
  type StatusState,
} from '../../domain/integrations/publication';
import type { Provider } from '../../domain/integrations/webhooks';
import { answerError, forgeRequest, type ForgeAnswer } from './forge-http';

/** How many pages of 100 comments are searched for our marker. */
const COMMENT_PAGES = 10;

export interface Forge {
  postStatus(sha: string, state: StatusState, description: string): Promise<void>;
  /** Creates or edits our comment; its id. `knownId`: the id stored from an earlier post. */
  upsertComment(
    number: number,
    body: string,
    marker: string,
    knownId: string | null,
  ): Promise<string>;
  /** GitHub only: the check run of `externalId` (the audit) on `sha`, created when missing. */
  checkRun?(sha: string, externalId: string, knownId: string | null): Promise<CheckRunHandle>;
}

/** A check run to update (GitHub's PATCH /check-runs/{id}; annotations are appended). */
export interface CheckRunHandle {
  id: string;
  update(body: {
    status: 'in_progress' | 'completed';
    conclusion?: string;
    output?: { title: string; summary: string; annotations?: CheckAnnotation[] };
    details_url?: string;
  }): Promise<void>;
}

export function forgeOf(
  provider: Provider,
  policy: SourcePolicy,
  baseUrl: string,
  project: string,
  token: string,
): Forge {
  const headers: Record<string, string> =
    provider === 'github'
      ? {
          Authorization: `Bearer ${token}`,
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': '2022-11-28',
        }
      : { 'PRIVATE-TOKEN': token };
  const call = async (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT',
    path: string,
    body?: unknown,
    accept: (a: ForgeAnswer) => boolean = (a) => a.status >= 200 && a.status < 300,
  ): Promise<ForgeAnswer> => {
    const answer = await forgeRequest(policy, baseUrl, { method, path, headers, body });
    if (!accept(answer)) throw answerError(`${method} ${path.replace(/\?.*$/, '')}`, answer);
    return answer;
  };
  const ok = (a: ForgeAnswer) => a.status >= 200 && a.status < 300;
  const idOf = (a: ForgeAnswer) => String((a.body as { id?: unknown } | null)?.id ?? '');
  /** The id of the comment starting with `marker` among those listed at `path`, or null. */
  const findMarked = async (path: string, marker: string): Promise<string | null> => {
    for (let page = 1; page <= COMMENT_PAGES; page += 1) {
      const a = await call('GET', `${path}?per_page=100&page=${page}`);
      const list = Array.isArray(a.body) ? (a.body as Array<{ id?: unknown; body?: unknown }>) : [];
      const mine = list.find((c) => typeof c.body === 'string' && c.body.startsWith(marker));
      if (mine) return String(mine.id);
      if (list.length < 100) return null;
    }
    return null;
  };

  if (provider === 'github') {
    const repo = `/repos/${project.split('/').map(encodeURIComponent).join('/')}`;
    return {
      async postStatus(sha, state, description) {
        await call('POST', `${repo}/statuses/${sha}`, {
          state: githubState(state),
          description,
          context: STATUS_CONTEXT,
        });
      },
      async checkRun(sha, externalId, knownId) {
        let id = knownId;
        if (!id) {
          // Found again by its external id (a crash between the creation and storing its id).
          const listed = await call(
            'GET',
            `${repo}/commits/${sha}/check-runs?check_name=${encodeURIComponent(STATUS_CONTEXT)}&filter=all&per_page=100`,
          );
          const runs = (
            listed.body as { check_runs?: Array<{ id?: unknown; external_id?: unknown }> }
          )?.check_runs;
          const mine = Array.isArray(runs) ? runs.find((r) => r.external_id === externalId) : null;
          id = mine
            ? String(mine.id)
            : idOf(
                await call('POST', `${repo}/check-runs`, {
                  name: STATUS_CONTEXT,
                  head_sha: sha,
                  external_id: externalId,
                  status: 'in_progress',
                }),
              );
        }
        const runId = id;
        return {
          id: runId,
          async update(body) {
            await call('PATCH', `${repo}/check-runs/${encodeURIComponent(runId)}`, body);
          },
        };
      },
      async upsertComment(number, body, marker, knownId) {
        const id = knownId ?? (await findMarked(`${repo}/issues/${number}/comments`, marker));
        if (id) {
          const edited = await call(
            'PATCH',
            `${repo}/issues/comments/${encodeURIComponent(id)}`,
            { body },
            (a) => ok(a) || a.status === 404,
          );
          if (edited.status !== 404) return id;
        }
        return idOf(await call('POST', `${repo}/issues/${number}/comments`, { body }));
      },
    };
  }
  const proj = `/projects/${encodeURIComponent(project)}`;
  return {
    async postStatus(sha, state, description) {
      // GitLab refuses a status that is already in that state ("Cannot transition status"):
      // that status is posted already.
      await call(
        'POST',
        `${proj}/statuses/${sha}`,
        { state: gitlabState(state), name: STATUS_CONTEXT, description },
        (a) => ok(a) || (a.status === 400 && /cannot transition/i.test(JSON.stringify(a.body))),
      );
    },
    async upsertComment(iid, body, marker, knownId) {
      const id = knownId ?? (await findMarked(`${proj}/merge_requests/${iid}/notes`, marker));
      if (id) {
        const edited = await call(
          'PUT',
          `${proj}/merge_requests/${iid}/notes/${encodeURIComponent(id)}`,
          { body },
          (a) => ok(a) || a.status === 404,
        );
        if (edited.status !== 404) return id;
      }
      return idOf(await call('POST', `${proj}/merge_requests/${iid}/notes`, { body }));
    },
  };
}
