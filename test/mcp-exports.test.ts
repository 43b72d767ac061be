/**
 * `get_export_content` through the official MCP client, for every export format: the file a
 * REST download gives, as text for the textual formats and as an embedded resource (base64
 * blob, its media type) for the MADR tar.gz. It used to fail for all of them (-32602 "Invalid
 * tools/call result": the streamed file body was handed to the SDK as it was). Then a decision
 * written by a hostile member, through the real stack: its brief over REST, MCP and the CLI.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { EXPORT_FORMATS } from '../domain/exports/render';
import { runAudit, startAuditHarness, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { authorizeInBrowser, Browser, MemoryOAuthProvider } from './helpers/oauth-flow';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';

let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;
let auditId: string;
let repositoryId: string;
let client: Client;
const login = `alice-${crypto.randomBytes(3).toString('hex')}`;
const password = 'correct horse battery staple';

const ws = () => `/v1/workspaces/${tenant.workspaceId}`;

test.before(async () => {
  h = await startAuditHarness({ config: { loginRateLimit: 1000 } });
  const db = h.app.services.db;
  tenant = await createTenant(db, { login });
  await setPasswordHash(db, login, await hashPassword(password));
  repo = createRepo(SAMPLE_FILES);
  const made = await call(h.app.url, 'POST', `${ws()}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  repositoryId = made.body.id;
  const done = await runAudit(h.app.url, tenant.token, tenant.workspaceId, {
    repository_id: repositoryId,
  });
  if (done.status !== 'completed') throw new Error(`audit ${done.id} ${done.status}`);
  auditId = done.id;

  // An MCP client authorized by the member for reports:read.
  const mcpUrl = new URL(`${h.app.url}/mcp`);
  const provider = new MemoryOAuthProvider();
  if ((await auth(provider, { serverUrl: mcpUrl })) !== 'REDIRECT') throw new Error('no redirect');
  const back = await authorizeInBrowser(
    new Browser(),
    provider.authorizationUrl!,
    { login, password },
    { scopes: ['reports:read', 'audits:read', 'decisions:read'], memberId: tenant.memberId },
  );
  await auth(provider, { serverUrl: mcpUrl, authorizationCode: back.searchParams.get('code')! });
  client = new Client({ name: 'archaudit-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
});

test.after.always(async () => {
  await client?.close();
  await h?.close();
  repo?.remove();
});

/** Requests an export over REST, waits for it, and downloads its bytes. */
async function exported(format: string) {
  const started = await call(h.app.url, 'POST', `${ws()}/audits/${auditId}/exports`, {
    token: tenant.token,
    body: { format },
  });
  if (started.status !== 202) throw new Error(started.text);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await call(h.app.url, 'GET', `${ws()}/exports/${started.body.id}`, {
      token: tenant.token,
    });
    if (r.body.status === 'available') break;
    if (r.body.status === 'failed' || Date.now() > deadline) throw new Error(r.text);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  const res = await fetch(`${h.app.url}${ws()}/exports/${started.body.id}/content`, {
    headers: { Authorization: `Bearer ${tenant.token}` },
  });
  return {
    id: started.body.id as string,
    type: (res.headers.get('content-type') ?? '').split(';')[0]!,
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

for (const format of EXPORT_FORMATS) {
  test(`get_export_content: ${format}`, async (t) => {
    const e = await exported(format);
    t.true(e.bytes.length > 0);
    const result = await client.callTool({
      name: 'get_export_content',
      arguments: { export_id: e.id },
    });
    t.falsy(result.isError, JSON.stringify(result).slice(0, 300));
    const content = result.content as Array<Record<string, any>>;
    t.is(content.length, 1);
    if (format === 'madr') {
      t.is(content[0]!.type, 'resource');
      t.is(content[0]!.resource.mimeType, 'application/gzip');
      t.is(content[0]!.resource.uri, `archaudit:${ws()}/exports/${e.id}/content`);
      t.deepEqual(Buffer.from(content[0]!.resource.blob as string, 'base64'), e.bytes);
    } else {
      t.is(content[0]!.type, 'text');
      t.is(content[0]!.text, e.bytes.toString('utf8'), 'the same file as over REST');
    }
    t.is(result.structuredContent, undefined, 'a file is no structured result');
  });
}

test('get_export_content of an unknown export is a tool error, not a protocol error', async (t) => {
  const result = await client.callTool({
    name: 'get_export_content',
    arguments: { export_id: crypto.randomUUID() },
  });
  t.true(result.isError);
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  t.is(JSON.parse(text).status, 404);
});

const ESC = '\u001b';
/** What a hostile member writes into a decision (REST refuses only NUL and lone surrogates). */
const HOSTILE = `<img src=x onerror=alert(1)> [x](javascript:alert(1)) ![p](http://127.0.0.1:9/p.png) ${ESC}[2J${ESC}]0;owned\u0007${ESC}]8;;http://evil.example/${ESC}\\link${ESC}]8;;${ESC}\\ \u009b31m \u202eevil`;
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function archaudit(...args: string[]): Promise<{ code: number | null; stdout: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ARCHAUDIT_URL: h.app.url,
    ARCHAUDIT_TOKEN: tenant.token,
  };
  delete env.CI;
  const root = path.resolve(__dirname, '..');
  const child = spawn(process.execPath, [path.join(root, 'cli', 'bin.cjs'), ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

test('a hostile decision: its brief over REST, MCP and the CLI shows no HTML, link or escape', async (t) => {
  const snapshots = await call(
    h.app.url,
    'GET',
    `${ws()}/repositories/${repositoryId}/architecture/snapshots`,
    { token: tenant.token },
  );
  const arch = await call(h.app.url, 'GET', `${ws()}/audits/${auditId}/architecture`, {
    token: tenant.token,
  });
  const evidenceId = arch.body.evidence[0].id as string;
  const created = await call(h.app.url, 'POST', `${ws()}/decisions`, {
    token: tenant.token,
    body: {
      title: `Retire ${HOSTILE}`.slice(0, 500),
      question: `Why ${HOSTILE}?`,
      context: `# Owned\n${HOSTILE}\n- item`,
      snapshot_id: snapshots.body.items[0].id,
      owner_id: tenant.memberId,
      options: [
        { id: 'a', title: HOSTILE, description: HOSTILE, benefits: [HOSTILE] },
        { id: 'b', title: 'Keep', description: 'as is' },
      ],
      evidence_ids: [evidenceId],
      uncertainties: [],
      success_criteria: [
        { id: 'gone', description: HOSTILE, check: { kind: 'entity_absent', key: 'service:x' } },
      ],
    },
  });
  t.is(created.status, 201, created.text);
  const id = created.body.id as string;

  const rest = await call(h.app.url, 'GET', `${ws()}/decisions/${id}/brief`, {
    token: tenant.token,
  });
  t.is(rest.status, 200, rest.text);
  const md: string = rest.body.markdown;
  for (const [what, text] of [['REST brief', md]] as const) {
    t.false(RAW_CONTROL.test(text), `${what}: a control character`);
    t.false(/<img|<svg/i.test(text), `${what}: raw HTML`);
    t.false(/(^|[^\\])\]\(javascript:/im.test(text), `${what}: a javascript: link`);
    t.false(/(^|[^\\])!\[/m.test(text), `${what}: an image`);
    t.false(/^# Owned/m.test(text), `${what}: an injected heading`);
  }

  const tool = await client.callTool({
    name: 'get_decision_brief',
    arguments: { decision_id: id },
  });
  t.falsy(tool.isError, JSON.stringify(tool).slice(0, 300));
  const text = (tool.content as Array<{ text: string }>)[0]!.text;
  t.false(RAW_CONTROL.test(text), 'MCP: a control character');
  t.is(JSON.parse(text).markdown, md, 'the same brief as over REST');

  const cli = await archaudit('decisions', 'brief', id);
  t.is(cli.code, 0);
  t.false(cli.stdout.includes(ESC), 'CLI: an escape sequence');
  t.false(RAW_CONTROL.test(cli.stdout.replace(/\n/g, '')), 'CLI: a control character');
  t.true(cli.stdout.includes('[2J'), 'what was there stays visible, inert');
  const json = await archaudit('--json', 'decisions', 'brief', id);
  t.false(RAW_CONTROL.test(json.stdout.replace(/\n/g, '')), 'CLI --json: a control character');
  t.is(JSON.parse(json.stdout).markdown, md, '--json still carries the same value');
});
