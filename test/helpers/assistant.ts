/** Assistant test helpers: a registered repository, a conversation, asking, waiting for a run. */
import type { AuditHarness } from './audit-harness';
import type { Tenant } from './factories';
import { createRepo, type TestRepo } from './git';
import { call, type Reply } from './http';

export interface AssistantWorld {
  h: AuditHarness;
  tenant: Tenant;
  ws: string;
  repo: TestRepo;
  repositoryId: string;
}

/** Registers a git repository with `files` in the tenant's workspace. */
export async function registerRepo(
  h: AuditHarness,
  tenant: Tenant,
  files: Record<string, string>,
): Promise<Omit<AssistantWorld, 'h' | 'tenant'>> {
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const repo = createRepo(files);
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'orders-system', url: `file://${repo.dir}` },
  });
  if (created.status !== 201) throw new Error(created.text);
  return { ws, repo, repositoryId: created.body.id };
}

export async function newConversation(w: AssistantWorld, title = 'Questions'): Promise<string> {
  const made = await call(w.h.app.url, 'POST', `${w.ws}/assistant/conversations`, {
    token: w.tenant.token,
    body: { title, repository_id: w.repositoryId },
  });
  if (made.status !== 201) throw new Error(made.text);
  return made.body.id;
}

export function ask(
  w: AssistantWorld,
  conversationId: string,
  content: string,
  token = w.tenant.token,
): Promise<Reply> {
  return call(w.h.app.url, 'POST', `${w.ws}/assistant/conversations/${conversationId}/messages`, {
    token,
    body: { content },
  });
}

/** Polls getAssistantRun until the run leaves queued/running. */
export async function waitForRun(w: AssistantWorld, runId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await call(w.h.app.url, 'GET', `${w.ws}/assistant/runs/${runId}`, {
      token: w.tenant.token,
    });
    if (reply.status !== 200) throw new Error(reply.text);
    if (!['queued', 'running'].includes(reply.body.status)) return reply.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${reply.body.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The assistant message a run recorded. */
export async function answerOf(
  w: AssistantWorld,
  run: { conversation_id: string; assistant_message_id: string },
) {
  const page = await call(
    w.h.app.url,
    'GET',
    `${w.ws}/assistant/conversations/${run.conversation_id}/messages?limit=200`,
    { token: w.tenant.token },
  );
  return page.body.items.find((m: { id: string }) => m.id === run.assistant_message_id);
}
