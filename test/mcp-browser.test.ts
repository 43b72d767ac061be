/**
 * The consent flow in a real browser (headless Chromium through playwright-core): a member
 * signs in, picks a workspace and scopes, allows, and the browser lands on the client's
 * redirect URI with a code that the client exchanges for a working MCP access token.
 * UPDATE_SCREENSHOTS=1 writes the consent page to docs/mcp-consent.png.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { chromium } from 'playwright-core';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { setPasswordHash } from '../db/sessions';
import { hashPassword } from '../domain/sessions/password';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from './helpers/chromium';

let app: TestApp;
let tenant: Tenant;
const login = `carol-${crypto.randomBytes(3).toString('hex')}`;
const password = 'browser test password';

test.before(async () => {
  app = await startTestApp();
  tenant = await createTenant(app.services.db, { login });
  await app.services
    .db('workspaces')
    .where({ id: tenant.workspaceId })
    .update({ name: 'Acme Platform' });
  await setPasswordHash(app.services.db, login, await hashPassword(password));
});
test.after.always(async () => {
  await app?.close();
});

/** The MCP client's loopback redirect endpoint: resolves with the query it receives. */
async function callbackServer() {
  let resolve!: (q: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((r) => (resolve = r));
  const server = http.createServer((req, res) => {
    resolve(new URL(req.url!, 'http://127.0.0.1').searchParams);
    res.end('You may close this window.');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { url, received, close: () => new Promise((r) => server.close(r)) };
}

test('a member signs in, consents in Chromium and the client gets a working token', async (t) => {
  const callback = await callbackServer();
  const reg = await fetch(`${app.url}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Claude Desktop (test)',
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const client = (await reg.json()) as { client_id: string };
  const verifier = crypto.randomBytes(32).toString('base64url');
  const authorize = new URL(`${app.url}/oauth/auth`);
  authorize.search = new URLSearchParams({
    client_id: client.client_id,
    response_type: 'code',
    redirect_uri: callback.url,
    scope: 'repositories:read audits:read audits:write decisions:read',
    resource: `${app.url}/mcp`,
    state: 'browser-state',
    code_challenge: crypto.hash('sha256', verifier, 'base64url'),
    code_challenge_method: 'S256',
  }).toString();

  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
  });
  try {
    const page = await context.newPage();
    await page.goto(authorize.href);
    await page.waitForURL(/\/session\/sign-in/);
    await page.fill('#login', login);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/oauth\/interaction\//);
    t.is(await page.textContent('h1'), 'Authorize Claude Desktop (test)');
    t.true((await page.textContent('main'))!.includes(new URL(callback.url).host));
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await page.setViewportSize({ width: 900, height: 1000 });
      await page.screenshot({ path: path.join('docs', 'mcp-consent.png'), fullPage: true });
    }
    await page.uncheck('input[value="decisions:read"]');
    await page.check('input[value="audits:write"]');
    await page.click('button[value=allow]');
    const query = await callback.received;
    t.is(query.get('state'), 'browser-state');
    t.is(query.get('iss'), `${app.url}/oauth`);
    const code = query.get('code')!;
    t.truthy(code);

    const token = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: client.client_id,
        redirect_uri: callback.url,
        resource: `${app.url}/mcp`,
      }).toString(),
    });
    const tokens = (await token.json()) as {
      access_token: string;
      scope: string;
      expires_in: number;
    };
    t.is(token.status, 200);
    t.deepEqual(tokens.scope.split(' ').sort(), [
      'audits:read',
      'audits:write',
      'repositories:read',
    ]);
    t.is(tokens.expires_in, 3600);
    const mcp = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'b', version: '1' },
        },
      }),
    });
    t.is(mcp.status, 200);
  } finally {
    await context.close();
    await callback.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
