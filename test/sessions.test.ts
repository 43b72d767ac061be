/**
 * The customer session: sign-in with a password set by the operator command, the cookie's
 * flags, CSRF on every form, sign-in throttling per login-and-address and per address (without
 * lockout), expiry and sign-out.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import test from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant } from './helpers/factories';
import { Browser, hiddenField } from './helpers/oauth-flow';
import { passwordHashOf, setPasswordHash } from '../db/sessions';
import { hashPassword, verifyPassword } from '../domain/sessions/password';

let app: TestApp;
const password = 'a long enough password';

test.before(async () => {
  app = await startTestApp({ loginRateLimit: 3, trustProxy: true });
});
test.after.always(async () => {
  await app?.close();
});

/** A browser from its own address (TRUST_PROXY), so per-IP limits of tests stay apart. */
function browser(
  address = `10.${crypto.randomInt(255)}.${crypto.randomInt(255)}.${crypto.randomInt(1, 255)}`,
): Browser {
  return new Browser({ 'X-Forwarded-For': address });
}

async function member(): Promise<string> {
  const login = `m-${crypto.randomBytes(4).toString('hex')}`;
  await createTenant(app.services.db, { login });
  await setPasswordHash(app.services.db, login, await hashPassword(password));
  return login;
}

async function signIn(b: Browser, login: string, pw: string, csrf?: string) {
  const form = await b.request(`${app.url}/session/sign-in`);
  return b.request(`${app.url}/session/sign-in`, {
    form: {
      csrf: csrf ?? hiddenField(form.text, 'csrf'),
      return_to: '/session',
      login,
      password: pw,
    },
  });
}

test('signing in sets an HttpOnly SameSite=Lax session cookie backed by a row; signing out ends it', async (t) => {
  const login = await member();
  const b = browser();
  const page = await b.request(`${app.url}/session/sign-in`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  const done = await signIn(b, login, password);
  t.is(done.status, 303);
  t.is(done.location, '/session');
  const cookie = done.headers.getSetCookie().find((c) => c.startsWith('aa_session='))!;
  t.regex(cookie, /httponly/i);
  t.regex(cookie, /samesite=lax/i);
  t.notRegex(cookie, /secure/i, 'plain http: no Secure flag');
  const home = await b.request(`${app.url}/session`);
  t.regex(home.text, new RegExp(`Signed in as ${login}`));
  const row = await app.services.db('member_sessions').where({ login }).first();
  const hours = (row.expires_at.getTime() - row.created_at.getTime()) / 3_600_000;
  t.is(Math.round(hours), 12);
  t.not(row.secret_sha256, b.cookie('aa_session'), 'only a digest of the secret is stored');

  const out = await b.request(`${app.url}/session/sign-out`, {
    form: { csrf: hiddenField(home.text, 'csrf') },
  });
  t.is(out.status, 303);
  t.truthy((await app.services.db('member_sessions').where({ id: row.id }).first()).signed_out_at);
  const after = await b.request(`${app.url}/session`);
  t.is(after.status, 302);
  t.is(after.location, '/session/sign-in');
});

test('a wrong password and an unknown login get the same answer', async (t) => {
  const login = await member();
  const wrong = await signIn(browser(), login, 'not the password');
  const unknown = await signIn(browser(), `nobody-${login}`, password);
  for (const reply of [wrong, unknown]) {
    t.is(reply.status, 401);
    t.regex(reply.text, /Wrong login or password\./);
    t.false(reply.headers.getSetCookie().some((c) => c.startsWith('aa_session=')));
  }
});

test("a form without its CSRF token, or with another browser's, is refused", async (t) => {
  const login = await member();
  const b = browser();
  const missing = await b.request(`${app.url}/session/sign-in`, {
    form: { login, password, return_to: '/session' },
  });
  t.is(missing.status, 403);
  const elsewhere = await browser().request(`${app.url}/session/sign-in`);
  const foreign = await signIn(b, login, password, hiddenField(elsewhere.text, 'csrf'));
  t.is(foreign.status, 403);
  t.is(await app.services.db('member_sessions').where({ login }).first(), undefined);
});

test("the probe's lockout attempt: failures from one address slow that address, never the owner elsewhere", async (t) => {
  const login = await member();
  // The attacker: ten wrong passwords from address A (LOGIN_RATE_LIMIT is 3 here).
  const a = browser();
  const answers: number[] = [];
  for (let i = 0; i < 10; i++) answers.push((await signIn(a, login, 'wrong')).status);
  t.deepEqual(answers, [401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
  // A is slowed, even with the right password.
  const slowed = await signIn(a, login, password);
  t.is(slowed.status, 429);
  const retry = Number(slowed.headers.get('retry-after'));
  t.true(retry >= 1 && retry <= 30, `Retry-After ${retry}`);
  t.regex(slowed.text, /Too many sign-in attempts for this login or from this address/);
  // The owner, from address B (a new browser each time, as each sign-in ends signed in):
  // signs in again and again (successes never count), and a typo does not undo that.
  const b = '192.0.2.77';
  for (let i = 0; i < 5; i++)
    t.is((await signIn(browser(b), login, password)).status, 303, `sign-in ${i}`);
  t.is((await signIn(browser(b), login, 'typo')).status, 401);
  t.is((await signIn(browser(b), login, password)).status, 303);
});

test('failed sign-ins from one address are limited across logins', async (t) => {
  const b = browser();
  for (let i = 0; i < 3; i++) t.is((await signIn(b, await member(), 'wrong')).status, 401);
  t.is(
    (await signIn(b, await member(), password)).status,
    429,
    'the fourth attempt from one address',
  );
  // Another address is not concerned.
  t.is((await signIn(browser(), await member(), password)).status, 303);
});

test('passwords are stored as salted scrypt with their parameters', async (t) => {
  const a = await hashPassword(password);
  const b = await hashPassword(password);
  t.regex(a, /^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(a, b);
  t.true(await verifyPassword(password, a));
  t.false(await verifyPassword(`${password}x`, a));
  t.false(await verifyPassword(password, null));
});

test('npm run admin -- set-password prints a generated password that signs in', async (t) => {
  const login = `m-${crypto.randomBytes(4).toString('hex')}`;
  await createTenant(app.services.db, { login });
  const run = promisify(execFile);
  const { stdout } = await run(
    'npx',
    ['tsx', 'scripts/admin.ts', 'set-password', '--login', login],
    {
      env: { ...process.env, DATABASE_URL: app.database.url },
    },
  );
  const generated = /^password=(\S+)$/m.exec(stdout)![1]!;
  t.true(generated.length >= 20);
  t.true(await verifyPassword(generated, await passwordHashOf(app.services.db, login)));
  t.is((await signIn(browser(), login, generated)).status, 303);
  const nobody = await t.throwsAsync(
    run('npx', ['tsx', 'scripts/admin.ts', 'set-password', '--login', `nobody-${login}`], {
      env: { ...process.env, DATABASE_URL: app.database.url },
    }),
  );
  t.regex(String((nobody as { stderr?: string }).stderr), /no member has the login/);
});

test('with an https PUBLIC_BASE_URL the cookies are Secure and __Host- prefixed', async (t) => {
  const secure = await startTestApp({ publicBaseUrl: 'https://audit.example' });
  try {
    const page = await new Browser().request(`${secure.url}/session/sign-in`);
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('__Host-aa_csrf='))!;
    t.truthy(cookie);
    t.regex(cookie, /; secure/i);
    t.regex(cookie, /; path=\//i);
  } finally {
    await secure.close();
  }
});

test('after sign-in the member returns only to a path of this site', async (t) => {
  for (const [returnTo, expected] of [
    ['/oauth/interaction/abc', '/oauth/interaction/abc'],
    ['//evil.example/x', '/session'],
    ['/\t/evil.example', '/session'],
    ['/\\evil.example', '/session'],
    ['https://evil.example/', '/session'],
  ] as const) {
    const b = browser();
    const form = await b.request(`${app.url}/session/sign-in`);
    const done = await b.request(`${app.url}/session/sign-in`, {
      // A login each: the per-login attempt limit of this app is 3.
      form: {
        csrf: hiddenField(form.text, 'csrf'),
        return_to: returnTo,
        login: await member(),
        password,
      },
    });
    t.is(done.location, expected, JSON.stringify(returnTo));
  }
});
