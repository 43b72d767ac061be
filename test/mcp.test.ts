/**
 * The MCP gateway end to end against the real stack: the official SDK client discovers the
 * authorization server, registers, is authorized by a member who signs in and consents over
 * HTTP, lists and calls tools (a real audit through Temporal), refreshes its token and loses
 * access when the member revokes the grant.
 */
import crypto from 'node:crypto';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { authorizeInBrowser, Browser, MemoryOAuthProvider } from './helpers/oauth-flow';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';

let h: AuditHarness;
let tenant: Tenant;
let other: Tenant;
let repo: TestRepo;
let repositoryId: string;
let otherRepositoryId: string;
const login = `alice-${crypto.randomBytes(3).toString('hex')}`;
const password = 'correct horse battery staple';

test.before(async () => {
  h = await startAuditHarness({ config: { loginRateLimit: 1000 } });
  const db = h.app.services.db;
  tenant = await createTenant(db, { login });
  other = await createTenant(db, { login: `bob-${crypto.randomBytes(3).toString('hex')}` });
  await setPasswordHash(db, login, await hashPassword(password));
  repo = createRepo(SAMPLE_FILES);
  const made = await call(h.app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  repositoryId = made.body.id;
  const theirs = await call(h.app.url, 'POST', `/v1/workspaces/${other.workspaceId}/repositories`, {
    token: other.token,
    body: { name: 'theirs', url: `file://${repo.dir}` },
  });
  otherRepositoryId = theirs.body.id;
});

test.after.always(async () => {
  await h?.close();
  repo?.remove();
});

const mcpUrl = () => new URL(`${h.app.url}/mcp`);

/** Discovery, registration, sign-in and consent, code exchange: a provider holding tokens. */
async function authorized(scopes: string[], provider = new MemoryOAuthProvider()) {
  const first = await auth(provider, { serverUrl: mcpUrl() });
  if (first !== 'REDIRECT') throw new Error(`expected a redirect, got ${first}`);
  const back = await authorizeInBrowser(
    new Browser(),
    provider.authorizationUrl!,
    { login, password },
    { scopes },
  );
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.href}`);
  await auth(provider, { serverUrl: mcpUrl(), authorizationCode: code });
  return provider;
}

async function connect(provider: MemoryOAuthProvider) {
  const client = new Client({ name: 'archaudit-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

test('an MCP client connects through discovery, registration, sign-in and consent, and calls tools', async (t) => {
  const provider = new MemoryOAuthProvider();
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  const client = new Client({ name: 'archaudit-test', version: '1.0.0' });
  await t.throwsAsync(client.connect(transport), { instanceOf: UnauthorizedError });
  t.truthy(provider.info?.client_id, 'registered dynamically');
  const url = provider.authorizationUrl!;
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.is(url.searchParams.get('resource'), mcpUrl().href);

  const browser = new Browser();
  const back = await authorizeInBrowser(
    browser,
    url,
    { login, password },
    { scopes: ['repositories:read', 'audits:read', 'audits:write'] },
  );
  await transport.finishAuth(back.searchParams.get('code')!);
  t.truthy(provider.saved?.access_token);
  t.truthy(provider.saved?.refresh_token);

  const connected = await connect(provider);
  const { tools } = await connected.listTools();
  const names = tools.map((x) => x.name);
  t.true(names.includes('list_repositories'));
  t.true(names.includes('audit_repository'));
  t.false(names.includes('create_repository'), 'no write tool without its scope');
  const listRepos = tools.find((x) => x.name === 'list_repositories')!;
  t.true(listRepos.annotations?.readOnlyHint);
  t.false('workspace_id' in (listRepos.inputSchema.properties ?? {}));

  const listed = await connected.callTool({ name: 'list_repositories', arguments: {} });
  t.falsy(listed.isError);
  t.deepEqual(
    (listed.structuredContent as { items: Array<{ id: string }> }).items.map((r) => r.id),
    [repositoryId],
  );

  // A real audit through Temporal, with progress notifications while it runs.
  const progress: Array<{ progress: number; total?: number }> = [];
  const audited = await connected.callTool(
    { name: 'audit_repository', arguments: { repository_id: repositoryId } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 180_000, resetTimeoutOnProgress: true },
  );
  t.falsy(audited.isError, JSON.stringify(audited.content));
  const audit = audited.structuredContent as { id: string; status: string; stages: unknown[] };
  t.is(audit.status, 'completed');
  t.true(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
  t.is(progress.at(-1)!.progress, audit.stages.length);

  const gate = await connected.callTool({ name: 'gate_status', arguments: { audit_id: audit.id } });
  t.falsy(gate.isError, JSON.stringify(gate.content));
  t.is((gate.structuredContent as { audit_status: string }).audit_status, 'completed');

  const truth = await connected.callTool({
    name: 'get_repository_architecture',
    arguments: { repository_id: repositoryId },
  });
  const entities = (truth.structuredContent as { entities: Array<{ canonical_key: string; evidence_ids: string[] }> }).entities;
  const entity = entities.find((e) => e.evidence_ids.length > 0)!;
  const explained = await connected.callTool({
    name: 'explain_entity',
    arguments: { repository_id: repositoryId, entity_key: entity.canonical_key },
  });
  t.falsy(explained.isError, JSON.stringify(explained.content));
  const explanation = explained.structuredContent as {
    entity: { canonical_key: string };
    evidence: Array<{ id: string }>;
    dependencies: { upstream: unknown[]; downstream: unknown[] };
  };
  t.is(explanation.entity.canonical_key, entity.canonical_key);
  t.deepEqual(explanation.evidence.map((e) => e.id).sort(), [...entity.evidence_ids].sort());
  t.true(Array.isArray(explanation.dependencies.downstream));

  // Resources: the truth, the Mermaid diagram.
  const { resources } = await connected.listResources();
  t.true(resources.some((r) => r.uri === `archaudit://repositories/${repositoryId}/diagram`));
  const diagram = await connected.readResource({ uri: `archaudit://repositories/${repositoryId}/diagram` });
  t.is(diagram.contents[0]!.mimeType, 'text/vnd.mermaid');
  t.regex(String(diagram.contents[0]!.text), /^flowchart/m);

  // Every tool call is an audit event naming the client.
  const events = await call(h.app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/audit-events?limit=200`, { token: tenant.token });
  const calls = events.body.items.filter((e: { action: string }) => e.action === 'mcp.tool_called');
  t.deepEqual(
    calls.map((e: { details: { tool: string } }) => e.details.tool).sort(),
    ['audit_repository', 'explain_entity', 'gate_status', 'get_repository_architecture', 'list_repositories'],
  );
  t.true(calls.every((e: { details: Record<string, unknown> }) => e.details.oauth_client_id === provider.info!.client_id));
  await connected.close();

  // Refresh: a new access token and a rotated refresh token; the new token works.
  const before = { ...provider.saved! };
  t.is(await auth(provider, { serverUrl: mcpUrl() }), 'AUTHORIZED');
  t.not(provider.saved!.access_token, before.access_token);
  t.not(provider.saved!.refresh_token, before.refresh_token);
  const again = await connect(provider);
  t.falsy((await again.callTool({ name: 'list_repositories', arguments: {} })).isError);
  await again.close();

  // The member lists and revokes the grant: the client's tokens stop working at once.
  const grants = await call(h.app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/oauth-grants`, { token: tenant.token });
  const grant = grants.body.items.find((g: { client_id: string }) => g.client_id === provider.info!.client_id);
  t.deepEqual(grant.scopes, ['repositories:read', 'audits:read', 'audits:write']);
  t.is(grant.redirect_host, '127.0.0.1:9');
  t.is(grant.revoked_at, null);
  const revoked = await call(h.app.url, 'DELETE', `/v1/workspaces/${tenant.workspaceId}/oauth-grants/${grant.id}`, { token: tenant.token });
  t.is(revoked.status, 200);
  t.truthy(revoked.body.revoked_at);
  const refused = await rawMcp(provider.saved!.access_token);
  t.is(refused.status, 401);
  t.regex(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const refresh = await tokenEndpoint({
    grant_type: 'refresh_token',
    refresh_token: provider.saved!.refresh_token!,
    client_id: String(provider.info!.client_id),
  });
  t.is(refresh.status, 400);
  t.is(refresh.body.error, 'invalid_grant');
});

test('discovery: protected resource metadata and RFC 8414 metadata name each other', async (t) => {
  const prm = await call(h.app.url, 'GET', '/.well-known/oauth-protected-resource/mcp');
  t.is(prm.status, 200);
  t.is(prm.body.resource, `${h.app.url}/mcp`);
  t.deepEqual(prm.body.authorization_servers, [`${h.app.url}/oauth`]);
  t.true(prm.body.scopes_supported.includes('audits:read'));
  for (const path of ['/.well-known/oauth-authorization-server/oauth', '/.well-known/oauth-authorization-server']) {
    const as = await call(h.app.url, 'GET', path);
    t.is(as.status, 200, path);
    t.is(as.body.issuer, `${h.app.url}/oauth`);
    t.deepEqual(as.body.code_challenge_methods_supported, ['S256']);
    t.is(as.body.registration_endpoint, `${h.app.url}/oauth/reg`);
    t.deepEqual(as.body.response_types_supported, ['code']);
  }
  const unauthenticated = await rawMcp(undefined);
  t.is(unauthenticated.status, 401);
  t.is(
    unauthenticated.headers.get('www-authenticate'),
    `Bearer resource_metadata="${h.app.url}/.well-known/oauth-protected-resource/mcp"`,
  );
});

/** A JSON-RPC `tools/list` POSTed to /mcp with a bearer token (or none). */
async function rawMcp(token: string | undefined) {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

async function tokenEndpoint(form: Record<string, string>) {
  const res = await fetch(`${h.app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}
