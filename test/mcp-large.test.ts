/**
 * Every MCP read tool stays under the documented result cap on a 500-entity system (issue 26):
 * a client signed in through OAuth calls each tool it can fill the arguments of, and no answer
 * is over TOOL_RESULT_MAX_CHARS; the architecture answers as keys with counts, lists default to
 * small pages.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, LOCAL_TEST_WORKSPACES, queuedAudit, type Tenant } from './helpers/factories';
import { call } from './helpers/http';
import { authorizeInBrowser, Browser, MemoryOAuthProvider } from './helpers/oauth-flow';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';
import { insertSnapshot } from '../db/architecture';
import { updateAudit } from '../db/audits';
import { TOOL_RESULT_MAX_CHARS, TOOL_DEFAULT_PAGE_SIZE } from '../api/mcp/bounds';
import { SCOPES } from '../domain/contract/values';

let app: TestApp;
let tenant: Tenant;
let repositoryId: string;
let auditId: string;
const login = `large-${crypto.randomBytes(3).toString('hex')}`;
const password = 'correct horse battery staple';
const ENTITIES = 500;

test.before(async () => {
  app = await startTestApp({
    loginRateLimit: 1000,
    localRepositoryWorkspaces: [LOCAL_TEST_WORKSPACES],
  });
  const db = app.services.db;
  tenant = await createTenant(db, { login });
  await setPasswordHash(db, login, await hashPassword(password));
  const made = await call(app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
    body: { name: 'large-system', url: 'file:///nowhere/large-system' },
  });
  if (made.status !== 201) throw new Error(made.text);
  repositoryId = made.body.id;
  // A completed audit whose snapshot holds 500 entities and 2,000 relationships.
  const audit = await queuedAudit(db, tenant, repositoryId);
  auditId = audit.id;
  await updateAudit(db, audit.id, { status: 'completed', completed_at: new Date() });
  const seen = new Date().toISOString();
  const entities = Array.from({ length: ENTITIES }, (_, i) => ({
    canonical_key: `${i % 5 === 0 ? 'datastore' : 'service'}:unit-${i}`,
    kind: i % 5 === 0 ? 'datastore' : 'service',
    name: `unit-${i}`,
    attributes: { image: `registry.example/unit-${i}:1.${i}.0`, ports: [8080 + (i % 50)] },
    confidence: '0.80',
    evidence_ids: [crypto.randomUUID(), crypto.randomUUID()],
    sources: ['cloud', 'code'],
    contradictions: [],
    first_observed_at: seen,
    last_observed_at: seen,
  }));
  const relationships = Array.from({ length: 2000 }, (_, i) => {
    const source = entities[i % ENTITIES]!.canonical_key;
    const target = entities[(i * 7 + 1) % ENTITIES]!.canonical_key;
    return {
      canonical_key: `connects_to:${source}->${target}#${i}`,
      kind: 'connects_to',
      source_key: source,
      target_key: target,
      attributes: { protocol: 'http' },
      confidence: '0.70',
      evidence_ids: [crypto.randomUUID()],
      sources: ['cloud'],
      contradictions: [],
      first_observed_at: seen,
      last_observed_at: seen,
      supersedes_id: null,
      superseded_at: null,
    };
  });
  await insertSnapshot(db, {
    id: crypto.randomUUID(),
    audit_id: audit.id,
    workspace_id: tenant.workspaceId,
    repository_id: repositoryId,
    version: '1',
    status: 'complete',
    sources: ['cloud', 'code'],
    missing_sources: ['cicd'],
    source_coverage: '0.6667',
    entity_count: entities.length,
    relationship_count: relationships.length,
    entities,
    relationships,
    generated_at: new Date().toISOString(),
  });
  // Enough audits that an unpaged list would be long.
  for (let i = 0; i < 60; i++) await queuedAudit(db, tenant, repositoryId);
});

test.after.always(async () => {
  await app?.close();
});

async function client(): Promise<Client> {
  const provider = new MemoryOAuthProvider();
  const serverUrl = new URL(`${app.url}/mcp`);
  if ((await auth(provider, { serverUrl })) !== 'REDIRECT') throw new Error('expected a redirect');
  const back = await authorizeInBrowser(
    new Browser(),
    provider.authorizationUrl!,
    { login, password },
    { scopes: SCOPES.filter((s) => s.endsWith(':read')), memberId: tenant.memberId },
  );
  await auth(provider, { serverUrl, authorizationCode: back.searchParams.get('code')! });
  const c = new Client({ name: 'archaudit-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  return c;
}

const textOf = (result: any): string =>
  (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');

test('every read tool answers under the cap on a 500-entity system', async (t) => {
  const c = await client();
  const { tools } = await c.listTools();
  const values: Record<string, string> = {
    repository_id: repositoryId,
    audit_id: auditId,
    entity_key: 'service:unit-1',
  };
  let called = 0;
  const sizes: string[] = [];
  for (const tool of tools) {
    if (!tool.annotations?.readOnlyHint) continue;
    const required = (tool.inputSchema.required ?? []) as string[];
    if (!required.every((k) => k in values)) continue;
    const args = Object.fromEntries(required.map((k) => [k, values[k]]));
    const result = await c.callTool({ name: tool.name, arguments: args });
    const text = textOf(result);
    called++;
    sizes.push(`${tool.name}=${text.length}`);
    t.true(text.length <= TOOL_RESULT_MAX_CHARS, `${tool.name} answered ${text.length} characters`);
    if (result.structuredContent)
      t.true(JSON.stringify(result.structuredContent).length <= TOOL_RESULT_MAX_CHARS, tool.name);
  }
  t.true(called >= 20, `${called} tools called: ${sizes.join(', ')}`);
});

test('the architecture is keys with counts; explain_entity gives the detail; lists are small pages', async (t) => {
  const c = await client();
  const arch = await c.callTool({
    name: 'get_repository_architecture',
    arguments: { repository_id: repositoryId },
  });
  const body = JSON.parse(textOf(arch));
  t.true(body.summary);
  t.is(body.counts.entities, ENTITIES);
  t.is(body.entities.length, ENTITIES, 'every entity key is listed');
  t.true(body.entities.includes('service:unit-1 (0.80)'));
  t.regex(body.truncated.hint, /explain_entity/);

  const audits = await c.callTool({ name: 'list_audits', arguments: {} });
  const page = JSON.parse(textOf(audits));
  t.is(page.items.length, TOOL_DEFAULT_PAGE_SIZE);
  t.true(page.has_more);
  const next = await c.callTool({ name: 'list_audits', arguments: { cursor: page.next_cursor } });
  const second = JSON.parse(textOf(next));
  t.is(second.items.length, TOOL_DEFAULT_PAGE_SIZE);
  t.false(second.items.some((a: any) => page.items.some((b: any) => b.id === a.id)));
});
