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
  await connected.close();
});
