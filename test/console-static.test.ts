/**
 * How the API serves the built console (npm test builds it first): `/` redirects to /app/, the
 * page and its hashed assets carry a strict CSP, assets are immutable and compressed, the page
 * itself is not cached, unknown assets are 404, and /app/demo exists only with DEMO_PUBLIC_READ.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { CONSOLE_CSP, CONSOLE_DIR } from '../api/console/static';
import { ensureDemo } from '../platform/bootstrap';

let app: TestApp;
let demoApp: TestApp;

test.before(async () => {
  [app, demoApp] = await Promise.all([startTestApp(), startTestApp({ demoPublicRead: true })]);
});
test.after.always(async () => {
  await Promise.all([app?.close(), demoApp?.close()]);
});

const get = (base: string, p: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${p}`, { redirect: 'manual', headers });

test('/ and /app redirect to /app/; every console path is the page, strict CSP, not cached', async (t) => {
  for (const p of ['/', '/app']) {
    const r = await get(app.url, p);
    t.is(r.status, 302, p);
    t.is(r.headers.get('location'), '/app/');
  }
  for (const p of [
    '/app/',
    '/app/w/3f1c2a5e-8b7d-4c6e-9a0b-1d2e3f4a5b6c/decisions',
    '/app/nowhere',
  ]) {
    const r = await get(app.url, p);
    t.is(r.status, 200, p);
    t.regex(r.headers.get('content-type')!, /^text\/html/);
    t.is(r.headers.get('cache-control'), 'no-cache');
    t.is(r.headers.get('content-security-policy'), CONSOLE_CSP);
    t.is(r.headers.get('x-content-type-options'), 'nosniff');
    const html = await r.text();
    t.regex(html, /<script type="module" crossorigin src="\/app\/assets\/index-[\w-]+\.js">/);
    t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  }
  t.regex(CONSOLE_CSP, /script-src 'self'(;|$)/);
  t.regex(CONSOLE_CSP, /default-src 'none'/);
  t.notRegex(CONSOLE_CSP, /unsafe-inline|unsafe-eval|https?:/);
});

test('hashed assets are immutable, compressed when accepted, the same bytes either way', async (t) => {
  const assets = fs.readdirSync(path.join(CONSOLE_DIR, 'assets')).filter((f) => /\.js$/.test(f));
  t.true(assets.length > 0);
  const name = assets.find((f) => f.startsWith('index-'))!;
  const plain = await get(app.url, `/app/assets/${name}`, { 'accept-encoding': 'identity' });
  t.is(plain.status, 200);
  t.is(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.regex(plain.headers.get('content-type')!, /^text\/javascript/);
  t.is(plain.headers.get('content-encoding'), null);
  const body = Buffer.from(await plain.arrayBuffer());
  t.deepEqual(body, fs.readFileSync(path.join(CONSOLE_DIR, 'assets', name)));
  // fetch decodes the body it asked to be compressed: the same script arrives, fewer bytes sent.
  const br = await get(app.url, `/app/assets/${name}`, { 'accept-encoding': 'br' });
  t.is(br.headers.get('content-encoding'), 'br');
  t.true(Number(br.headers.get('content-length')) < body.length);
  t.deepEqual(Buffer.from(await br.arrayBuffer()), body);
  const gz = await get(app.url, `/app/assets/${name}`, { 'accept-encoding': 'gzip' });
  t.is(gz.headers.get('content-encoding'), 'gzip');
  t.regex(gz.headers.get('vary')!, /Accept-Encoding/i);
  for (const p of [
    '/app/assets/missing.js',
    `/app/assets/${name}.br`,
    '/app/assets/..%2F..%2Fpackage.json',
  ]) {
    const r = await get(app.url, p);
    t.is(r.status, 404, p);
  }
});

test('/app/demo opens the demo workspace only with DEMO_PUBLIC_READ', async (t) => {
  const off = await get(app.url, '/app/demo');
  t.is(off.status, 404);
  t.regex(await off.text(), /DEMO_PUBLIC_READ/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-demo-'));
  const demo = await ensureDemo(demoApp.services.db, dir, 'https://git.example.com/demo.git');
  const on = await get(demoApp.url, '/app/demo');
  t.is(on.status, 302);
  t.is(on.headers.get('location'), `/app/w/${demo.workspaceId}`);
  fs.rmSync(dir, { recursive: true, force: true });
});
