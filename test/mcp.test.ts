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
import { startTestApp } from './helpers/app';
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
let untouchedRepositoryId: string;
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
  // A repository no test audits: what a refused call must leave without audits.
  const idle = await call(h.app.url, 'POST', `/v1/workspaces/${tenant.workspaceId}/repositories`, {
    token: tenant.token,
    body: { name: 'untouched', url: `file://${repo.dir}` },
  });
  untouchedRepositoryId = idle.body.id;
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

const mcpUrl = (base = h.app.url) => new URL(`${base}/mcp`);

/** Discovery, registration, sign-in and consent, code exchange: a provider holding tokens. */
async function authorized(
  scopes: string[],
  provider = new MemoryOAuthProvider(),
  at: { base: string; memberId: string } = { base: h.app.url, memberId: tenant.memberId },
) {
  const first = await auth(provider, { serverUrl: mcpUrl(at.base) });
  if (first !== 'REDIRECT') throw new Error(`expected a redirect, got ${first}`);
  const back = await authorizeInBrowser(
    new Browser(),
    provider.authorizationUrl!,
    { login, password },
    { scopes, memberId: at.memberId },
  );
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.href}`);
  await auth(provider, { serverUrl: mcpUrl(at.base), authorizationCode: code });
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
    { scopes: ['repositories:read', 'audits:read', 'audits:write'], memberId: tenant.memberId },
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
    [untouchedRepositoryId, repositoryId],
    'newest first',
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
  const entities = (
    truth.structuredContent as {
      entities: Array<{ canonical_key: string; evidence_ids: string[] }>;
    }
  ).entities;
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
  const { resourceTemplates } = await connected.listResourceTemplates();
  t.deepEqual(
    resourceTemplates.map((r) => r.uriTemplate),
    [
      'archaudit://repositories/{repository_id}/architecture',
      'archaudit://repositories/{repository_id}/diagram',
      'archaudit://decisions/{decision_id}/brief',
    ],
  );
  const { resources } = await connected.listResources();
  t.true(resources.some((r) => r.uri === `archaudit://repositories/${repositoryId}/diagram`));
  const diagram = await connected.readResource({
    uri: `archaudit://repositories/${repositoryId}/diagram`,
  });
  t.is(diagram.contents[0]!.mimeType, 'text/vnd.mermaid');
  t.regex(String((diagram.contents[0] as { text: string }).text), /^flowchart/m);

  // Every tool call is an audit event naming the client.
  const events = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/audit-events?limit=200`,
    { token: tenant.token },
  );
  const calls = events.body.items.filter(
    (e: { action: string; details: Record<string, unknown> }) =>
      e.action === 'mcp.tool_called' && e.details.oauth_client_id === provider.info!.client_id,
  );
  t.deepEqual(calls.map((e: { details: { tool: string } }) => e.details.tool).sort(), [
    'audit_repository',
    'explain_entity',
    'gate_status',
    'get_repository_architecture',
    'list_repositories',
  ]);
  t.true(calls.every((e: { details: Record<string, unknown> }) => e.details.outcome === 'ok'));
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
  const grants = await call(h.app.url, 'GET', `/v1/workspaces/${tenant.workspaceId}/oauth-grants`, {
    token: tenant.token,
  });
  const grant = grants.body.items.find(
    (g: { client_id: string }) => g.client_id === provider.info!.client_id,
  );
  t.deepEqual(grant.scopes, ['repositories:read', 'audits:read', 'audits:write']);
  t.is(grant.redirect_host, '127.0.0.1:9');
  t.is(grant.revoked_at, null);
  const revoked = await call(
    h.app.url,
    'DELETE',
    `/v1/workspaces/${tenant.workspaceId}/oauth-grants/${grant.id}`,
    { token: tenant.token },
  );
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
  for (const path of [
    '/.well-known/oauth-authorization-server/oauth',
    '/.well-known/oauth-authorization-server',
  ]) {
    const as = await call(h.app.url, 'GET', path);
    t.is(as.status, 200, path);
    t.is(as.body.issuer, `${h.app.url}/oauth`);
    t.deepEqual(as.body.code_challenge_methods_supported, ['S256']);
    t.is(as.body.registration_endpoint, `${h.app.url}/oauth/reg`);
    t.deepEqual(as.body.response_types_supported, ['code']);
  }
  const preflight = await fetch(mcpUrl(), {
    method: 'OPTIONS',
    headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' },
  });
  t.is(preflight.status, 204);
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
  const unauthenticated = await rawMcp(undefined);
  t.is(unauthenticated.status, 401);
  t.is(
    unauthenticated.headers.get('www-authenticate'),
    `Bearer resource_metadata="${h.app.url}/.well-known/oauth-protected-resource/mcp"`,
  );
});

/** A JSON-RPC `tools/list` POSTed to /mcp with a bearer token (or none). */
async function rawMcp(token: string | undefined, base = h.app.url) {
  return fetch(mcpUrl(base), {
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

// ---- Bad input: each refused in the protocol's own form, nothing changed ----

/** A public client registered directly (RFC 7591). */
async function register(metadata: Record<string, unknown> = {}) {
  const res = await fetch(`${h.app.url}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Raw client',
      redirect_uris: ['http://127.0.0.1:9/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** An authorization request of a raw client (S256 PKCE for `verifier`, resource /mcp). */
function authorizeUrl(
  clientId: string,
  params: Record<string, string> = {},
  verifier = 'x'.repeat(43),
) {
  const url = new URL(`${h.app.url}/oauth/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1:9/callback',
    scope: 'repositories:read',
    resource: `${h.app.url}/mcp`,
    state: 'xyz',
    code_challenge: crypto.hash('sha256', verifier, 'base64url'),
    code_challenge_method: 'S256',
    ...params,
  }).toString();
  return url;
}

/** An authorization code for a raw client, with its verifier. */
async function codeFor(clientId: string, scopes = ['repositories:read']) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const url = authorizeUrl(clientId, { scope: scopes.join(' ') }, verifier);
  const back = await authorizeInBrowser(
    new Browser(),
    url,
    { login, password },
    { scopes, memberId: tenant.memberId },
  );
  return { code: back.searchParams.get('code')!, verifier };
}

function exchange(clientId: string, code: string, verifier: string) {
  return tokenEndpoint({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:9/callback',
    resource: `${h.app.url}/mcp`,
  });
}

/** Audits of one repository: other tests of this file start audits of their own concurrently. */
async function auditCount(ofRepository: string): Promise<number> {
  const audits = await call(
    h.app.url,
    'GET',
    `/v1/workspaces/${tenant.workspaceId}/audits?limit=200&repository_id=${ofRepository}`,
    { token: tenant.token },
  );
  return audits.body.items.length;
}

test('an unknown tool and schema-invalid arguments are JSON-RPC invalid params, and run nothing', async (t) => {
  const client = await connect(
    await authorized(['repositories:read', 'audits:read', 'audits:write']),
  );
  const untouched = untouchedRepositoryId;
  const before = await auditCount(untouched);
  t.is(before, 0);
  const unknown = await t.throwsAsync(client.callTool({ name: 'drop_database', arguments: {} }));
  t.is((unknown as { code?: number }).code, -32602);
  t.regex(unknown!.message, /Unknown tool: drop_database/);
  const badId = await t.throwsAsync(
    client.callTool({ name: 'get_repository', arguments: { repository_id: 'not-a-uuid' } }),
  );
  t.is((badId as { code?: number }).code, -32602);
  t.regex(badId!.message, /repository_id/);
  const extra = await t.throwsAsync(
    client.callTool({
      name: 'audit_repository',
      arguments: { repository_id: untouched, branch: 'main' },
    }),
  );
  t.is((extra as { code?: number }).code, -32602);
  const missing = await t.throwsAsync(client.callTool({ name: 'get_audit', arguments: {} }));
  t.is((missing as { code?: number }).code, -32602);
  t.is(await auditCount(untouched), before, 'no audit was started');
  await client.close();
});

test('an expired access token is refused with WWW-Authenticate and resource_metadata', async (t) => {
  const provider = await authorized(['repositories:read']);
  const token = provider.saved!.access_token;
  t.is((await rawMcp(token)).status, 200);
  await h.app.services
    .db('oauth_models')
    .where({ model: 'AccessToken', id: token })
    .update({
      payload: h.app.services.db.raw(
        "jsonb_set(payload, '{exp}', to_jsonb(extract(epoch from now())::int - 120))",
      ),
    });
  const refused = await rawMcp(token);
  t.is(refused.status, 401);
  const header = refused.headers.get('www-authenticate') ?? '';
  t.regex(header, /^Bearer /);
  t.regex(header, /error="invalid_token"/);
  t.true(
    header.includes(`resource_metadata="${h.app.url}/.well-known/oauth-protected-resource/mcp"`),
  );
});

test('a token revoked at the revocation endpoint (RFC 7009) is refused', async (t) => {
  const provider = await authorized(['repositories:read']);
  const token = provider.saved!.access_token;
  const res = await fetch(`${h.app.url}/oauth/token/revocation`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, client_id: String(provider.info!.client_id) }).toString(),
  });
  t.is(res.status, 200);
  t.is((await rawMcp(token)).status, 401);
});

test('a token of this server for another resource (audience mismatch) and an API token are refused', async (t) => {
  const provider = await authorized(['repositories:read']);
  const db = h.app.services.db;
  const row = await db('oauth_models')
    .where({ model: 'AccessToken', id: provider.saved!.access_token })
    .first();
  const forged = crypto.randomBytes(32).toString('base64url');
  await db('oauth_models').insert({
    ...row,
    id: forged,
    payload: JSON.stringify({ ...row.payload, jti: forged, aud: 'https://elsewhere.example/mcp' }),
  });
  const refused = await rawMcp(forged);
  t.is(refused.status, 401);
  t.regex(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  t.regex(
    ((await refused.json()) as { error_description: string }).error_description,
    /not issued for/,
  );
  t.is((await rawMcp(tenant.token)).status, 401, 'REST API tokens are not MCP credentials');
  // And the authorization server issues no token for a resource other than /mcp.
  const client = await register();
  const url = authorizeUrl(client.body.client_id!, { resource: 'https://elsewhere.example/mcp' });
  const back = await new Browser().follow(url.href);
  t.is(back.redirected?.searchParams.get('error'), 'invalid_target');
});

test('a replayed authorization code is invalid_grant and ends the tokens it gave', async (t) => {
  const client = await register();
  const { code, verifier } = await codeFor(client.body.client_id!);
  const first = await exchange(client.body.client_id!, code, verifier);
  t.is(first.status, 200);
  t.is((await rawMcp(first.body.access_token)).status, 200);
  const replay = await exchange(client.body.client_id!, code, verifier);
  t.is(replay.status, 400);
  t.is(replay.body.error, 'invalid_grant');
  t.is((await rawMcp(first.body.access_token)).status, 401, 'the replay revoked the grant');
});

test('a wrong PKCE verifier is invalid_grant and issues nothing', async (t) => {
  const client = await register();
  const { code } = await codeFor(client.body.client_id!);
  const wrong = await exchange(
    client.body.client_id!,
    code,
    crypto.randomBytes(32).toString('base64url'),
  );
  t.is(wrong.status, 400);
  t.is(wrong.body.error, 'invalid_grant');
  t.is(wrong.body.access_token, undefined);
});

test('plain PKCE and a request without PKCE are refused at the authorization endpoint', async (t) => {
  const client = await register();
  const plain = authorizeUrl(client.body.client_id!, {
    code_challenge: 'a'.repeat(43),
    code_challenge_method: 'plain',
  });
  const none = authorizeUrl(client.body.client_id!);
  none.searchParams.delete('code_challenge');
  none.searchParams.delete('code_challenge_method');
  for (const url of [plain, none]) {
    const back = await new Browser().follow(url.href);
    t.is(back.redirected?.searchParams.get('error'), 'invalid_request', url.search);
    t.is(back.redirected?.searchParams.get('code'), null);
  }
});

test('registration takes public clients with https or loopback redirect URIs only', async (t) => {
  const web = await register({ redirect_uris: ['http://example.com/callback'] });
  t.is(web.status, 400);
  t.is(web.body.error, 'invalid_redirect_uri');
  const confidential = await register({ token_endpoint_auth_method: 'client_secret_basic' });
  t.is(confidential.status, 400);
  t.is(confidential.body.error, 'invalid_client_metadata');
  const ok = await register({
    redirect_uris: ['https://agent.example/callback', 'http://[::1]:8976/cb'],
  });
  t.is(ok.status, 201);
  t.is(ok.body.token_endpoint_auth_method, 'none');
  t.is(ok.body.client_secret, undefined);
});

test('an MCP tool cannot reach another workspace nor exceed the grant', async (t) => {
  const client = await connect(await authorized(['repositories:read']));
  const names = (await client.listTools()).tools.map((x) => x.name);
  t.false(names.includes('audit_repository'));
  t.false(names.includes('create_repository'));
  const theirs = await client.callTool({
    name: 'get_repository',
    arguments: { repository_id: otherRepositoryId },
  });
  t.true(theirs.isError);
  t.regex(String((theirs.content as Array<{ text: string }>)[0]!.text), /"code": "not_found"/);
  const ours = await client.callTool({
    name: 'get_repository',
    arguments: { repository_id: repositoryId },
  });
  t.falsy(ours.isError);
  // A write tool the grant lacks is not there to call; a read tool outside the grant is 403.
  const write = await t.throwsAsync(
    client.callTool({
      name: 'create_repository',
      arguments: { body: { name: 'x', url: 'https://example.com/x.git' } },
    }),
  );
  t.is((write as { code?: number }).code, -32602);
  const outside = await client.callTool({ name: 'list_audits', arguments: {} });
  t.true(outside.isError);
  t.regex(
    String((outside.content as Array<{ text: string }>)[0]!.text),
    /"code": "insufficient_scope"/,
  );
  await client.close();
});

test('consent never grants more than the role allows, nor a workspace the member is not in', async (t) => {
  const db = h.app.services.db;
  // alice is a plain member of bob's workspace.
  const [membership] = await db('members')
    .insert({ id: crypto.randomUUID(), workspace_id: other.workspaceId, login, role: 'member' })
    .returning('id');
  const provider = new MemoryOAuthProvider();
  t.is(await auth(provider, { serverUrl: mcpUrl() }), 'REDIRECT');
  const browser = new Browser();
  await t.throwsAsync(
    authorizeInBrowser(
      browser,
      provider.authorizationUrl!,
      { login, password },
      {
        memberId: membership.id,
        scopes: ['repositories:read', 'policies:write'],
      },
    ),
    { message: /Not grantable in .* with your role member: policies:write/ },
  );
  const [bobs] = await db('members')
    .where({ workspace_id: other.workspaceId })
    .whereNot({ login })
    .select('id');
  await t.throwsAsync(
    authorizeInBrowser(
      new Browser(),
      provider.authorizationUrl!,
      { login, password },
      {
        memberId: bobs.id,
        scopes: ['repositories:read'],
      },
    ),
    { message: /Pick one of your workspaces/ },
  );
  const grants = await db('oauth_grants').where({ client_id: provider.info!.client_id });
  t.is(grants.length, 0, 'no grant recorded');
});

test('a member who denies sends the client access_denied and records no grant', async (t) => {
  const client = await register();
  const back = await authorizeInBrowser(
    new Browser(),
    authorizeUrl(client.body.client_id!),
    { login, password },
    { scopes: ['repositories:read'], memberId: tenant.memberId, decision: 'deny' },
  );
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('code'), null);
  t.is(back.searchParams.get('state'), 'xyz');
  const grants = await h.app.services
    .db('oauth_grants')
    .where({ client_id: client.body.client_id });
  t.is(grants.length, 0);
});

test('a member sees their grants on the session page and revokes one there', async (t) => {
  const provider = new MemoryOAuthProvider({ client_name: 'Session page agent' });
  t.is(await auth(provider, { serverUrl: mcpUrl() }), 'REDIRECT');
  const browser = new Browser();
  const back = await authorizeInBrowser(
    browser,
    provider.authorizationUrl!,
    { login, password },
    { scopes: ['repositories:read'], memberId: tenant.memberId },
  );
  await auth(provider, { serverUrl: mcpUrl(), authorizationCode: back.searchParams.get('code')! });
  t.is((await rawMcp(provider.saved!.access_token)).status, 200);

  const home = await browser.request(`${h.app.url}/session`);
  t.regex(home.text, /Session page agent/);
  const action =
    /action="(\/session\/grants\/[^"]+\/revoke)"[^]*?name="csrf" value="([^"]+)"[^]*?<\/form><\/li>/.exec(
      home.text.slice(home.text.indexOf('Session page agent')),
    )!;
  const forged = await new Browser().request(`${h.app.url}${action[1]}`, { form: { csrf: 'x' } });
  t.is(forged.status, 403, 'no CSRF token, no revocation');
  t.is((await rawMcp(provider.saved!.access_token)).status, 200);
  const revoked = await browser.request(`${h.app.url}${action[1]}`, { form: { csrf: action[2]! } });
  t.is(revoked.status, 303);
  t.is((await rawMcp(provider.saved!.access_token)).status, 401);
  t.notRegex((await browser.request(`${h.app.url}/session`)).text, /Session page agent/);
});

test("MCP requests count against the grant's quota: 429 with Retry-After beyond it", async (t) => {
  const small = await startTestApp({ rateLimitQuota: 3 });
  try {
    const mine = await createTenant(small.services.db, { login });
    await setPasswordHash(small.services.db, login, await hashPassword(password));
    const provider = await authorized(['repositories:read'], new MemoryOAuthProvider(), {
      base: small.url,
      memberId: mine.memberId,
    });
    const token = provider.saved!.access_token;
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await rawMcp(token, small.url));
    t.deepEqual(
      replies.map((r) => r.status),
      [200, 200, 200, 429],
    );
    t.truthy(replies[3]!.headers.get('retry-after'));
    t.regex(replies[0]!.headers.get('ratelimit-policy') ?? '', /q=3/);
  } finally {
    await small.close();
  }
});
