/**
 * `npm run admin -- add-member` and `remove-member`: the second person every approval flow needs,
 * in one command, and a removal that ends access but keeps history.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import test from 'ava';
import { startTestApp, type TestApp } from './helpers/app';
import { createTenant, type Tenant } from './helpers/factories';
import { Browser, hiddenField } from './helpers/oauth-flow';
import { verifyPassword } from '../domain/sessions/password';
import { passwordHashOf } from '../db/sessions';

let app: TestApp;
const run = promisify(execFile);

test.before(async () => {
  app = await startTestApp({ trustProxy: true });
});
test.after.always(async () => {
  await app?.close();
});

function admin(args: string[], stdin?: string) {
  const child = run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, DATABASE_URL: app.database.url },
  });
  if (stdin !== undefined) {
    child.child.stdin!.end(stdin);
  } else child.child.stdin!.end();
  return child;
}

async function failure(args: string[]): Promise<{ code: number; stderr: string }> {
  const err = (await admin(args).then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: number; stderr: string } | undefined;
  if (!err) throw new Error(`admin ${args.join(' ')} succeeded`);
  return err;
}

function field(stdout: string, name: string): string | undefined {
  return new RegExp(`^${name}=(.*)$`, 'm').exec(stdout)?.[1];
}

async function members(tenant: Tenant): Promise<string[]> {
  const res = await fetch(`${app.url}/v1/workspaces/${tenant.workspaceId}/members?limit=200`, {
    headers: { authorization: `Bearer ${tenant.token}` },
  });
  const body = (await res.json()) as { items: { login: string }[] };
  return body.items.map((m) => m.login).sort();
}

async function signIn(login: string, password: string): Promise<number> {
  const b = new Browser({
    'X-Forwarded-For': `10.9.${crypto.randomInt(255)}.${crypto.randomInt(1, 255)}`,
  });
  const form = await b.request(`${app.url}/session/sign-in`);
  const done = await b.request(`${app.url}/session/sign-in`, {
    form: { csrf: hiddenField(form.text, 'csrf'), return_to: '/session', login, password },
  });
  return done.status;
}

test('add-member gives a second member a generated password, printed once, that signs in', async (t) => {
  const tenant = await createTenant(app.services.db, {
    login: `o-${crypto.randomBytes(4).toString('hex')}`,
  });
  const login = `bob-${crypto.randomBytes(4).toString('hex')}`;
  const { stdout } = await admin(['add-member', '--workspace', tenant.slug, '--login', login]);
  t.is(field(stdout, 'login'), login);
  t.is(field(stdout, 'role'), 'member');
  const password = field(stdout, 'password')!;
  t.true(password.length >= 20);
  t.true(await verifyPassword(password, await passwordHashOf(app.services.db, login)));
  t.is(await signIn(login, password), 303);
  t.true((await members(tenant)).includes(login));

  // A member of another workspace keeps the password they already sign in with.
  const other = await createTenant(app.services.db);
  const again = await admin([
    'add-member',
    '--workspace',
    other.slug,
    '--login',
    login,
    '--role',
    'admin',
  ]);
  t.is(field(again.stdout, 'password'), undefined);
  t.regex(again.stdout, /password unchanged/);
  t.is(field(again.stdout, 'role'), 'admin');
  t.is(await signIn(login, password), 303);

  const twice = await failure(['add-member', '--workspace', tenant.slug, '--login', login]);
  t.is(twice.code, 2);
  t.regex(twice.stderr, /already a member/);
});

test('add-member reads a password from stdin and checks its bounds, the role and the login', async (t) => {
  const tenant = await createTenant(app.services.db);
  const login = `carol-${crypto.randomBytes(4).toString('hex')}`;
  const chosen = 'a long enough chosen password';
  const { stdout } = await admin(
    [
      'add-member',
      '--workspace',
      tenant.slug,
      '--login',
      login,
      '--role',
      'admin',
      '--password-stdin',
    ],
    `${chosen}\n`,
  );
  t.regex(stdout, /password set/);
  t.notRegex(stdout, new RegExp(chosen), 'a chosen password is never echoed');
  t.is(await signIn(login, chosen), 303);

  const short = await admin(
    ['add-member', '--workspace', tenant.slug, '--login', `d-${login}`, '--password-stdin'],
    'short',
  ).then(
    () => undefined,
    (e: unknown) => e as { code: number; stderr: string },
  );
  t.is(short?.code, 2);
  t.regex(short!.stderr, /the password must have/);
  t.false((await members(tenant)).includes(`d-${login}`), 'nothing was added');

  for (const [args, message] of [
    [['--role', 'root'], /--role must be one of member, admin, owner/],
    [['--login', 'bad login!'], /--login:/],
    [['--workspace', 'no-such-workspace'], /no workspace with slug/],
  ] as const) {
    const base = { '--workspace': tenant.slug, '--login': `e-${login}` } as Record<string, string>;
    base[args[0]] = args[1];
    const refused = await failure(['add-member', ...Object.entries(base).flat()]);
    t.is(refused.code, 2);
    t.regex(refused.stderr, message);
  }
});

test('remove-member ends tokens and sign-in to the workspace, keeps history, and never the last owner', async (t) => {
  const owner = `o-${crypto.randomBytes(4).toString('hex')}`;
  const tenant = await createTenant(app.services.db, { login: owner });
  const login = `bob-${crypto.randomBytes(4).toString('hex')}`;
  const added = await admin(['add-member', '--workspace', tenant.slug, '--login', login]);
  const memberId = field(added.stdout, 'member_id')!;
  const minted = await admin([
    'create-token',
    '--workspace',
    tenant.slug,
    '--login',
    login,
    '--name',
    'bob ci',
    '--days',
    '5',
  ]);
  const token = field(minted.stdout, 'token')!;
  const read = () =>
    fetch(`${app.url}/v1/workspaces/${tenant.workspaceId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
  t.is((await read()).status, 200);

  const removed = await admin(['remove-member', '--workspace', tenant.slug, '--login', login]);
  t.is(field(removed.stdout, 'removed'), login);
  t.is(field(removed.stdout, 'revoked_tokens'), '1');
  const refused = await read();
  t.is(refused.status, 401);
  t.is(((await refused.json()) as { code: string }).code, 'invalid_token');
  t.false((await members(tenant)).includes(login));
  const row = await app.services.db('members').where({ id: memberId }).first();
  t.truthy(row.removed_at, 'the row stays for history');

  const noToken = await failure([
    'create-token',
    '--workspace',
    tenant.slug,
    '--login',
    login,
    '--name',
    'x',
  ]);
  t.regex(noToken.stderr, /no member/);
  const last = await failure(['remove-member', '--workspace', tenant.slug, '--login', owner]);
  t.regex(last.stderr, /last owner/);
  t.true((await members(tenant)).includes(owner));

  // Adding the login back restores the same member (its history stays linked), with a fresh role.
  const back = await admin([
    'add-member',
    '--workspace',
    tenant.slug,
    '--login',
    login,
    '--role',
    'admin',
  ]);
  t.is(field(back.stdout, 'member_id'), memberId);
  t.true((await members(tenant)).includes(login));
  t.is((await read()).status, 401, 'revoked tokens stay revoked');
});
