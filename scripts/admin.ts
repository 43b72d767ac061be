/**
 * Operator commands against DATABASE_URL (default: the embedded database `npm start` made).
 *
 *   npm run admin -- create-workspace --name "Acme" --slug acme --login alice [--days 90] [--scopes a,b]
 *   npm run admin -- create-token --workspace acme --login alice --name ci [--days 30] [--scopes a,b]
 *   npm run admin -- set-decision-policy --workspace acme [--quorum 2] [--reminder-hours 72]
 *   npm run admin -- set-assistant-limits --workspace acme [--user-daily 50] [--workspace-daily 500]
 *       [--monthly-usd 50] [--max-output-tokens 1024] [--max-active-user 2] [--max-active-workspace 10]
 *       [--time-zone Europe/Berlin]
 *   npm run admin -- set-password --login alice [--password-stdin]
 *   npm run admin -- add-member --workspace acme --login bob [--role member|admin|owner] [--password-stdin]
 *   npm run admin -- remove-member --workspace acme --login bob
 *
 * The token is printed once; only its SHA-256 is stored.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../platform/config';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner, issueToken, recordSystemWrite } from '../platform/bootstrap';
import {
  addMember,
  countMembersWithRole,
  findMemberByLogin,
  findWorkspaceBySlug,
  lockWorkspace,
  removeMember,
} from '../db/workspaces';
import { MAX_TOKEN_DAYS } from '../domain/tokens/rules';
import { setPolicy } from '../db/decisions';
import { SCOPES, type ScopeName } from '../domain/contract/values';
import { knownTimeZone, limitsOfWorkspace, replaceLimits } from '../db/assistant';
import { LIMIT_BOUNDS, limitsProblems, type AssistantLimits } from '../domain/assistant/limits';
import { formatMicros, parseMicros } from '../domain/audits/pricing';
import type { Knex } from 'knex';
import { loginExists, passwordHashOf, setPasswordHash } from '../db/sessions';
import {
  generatePassword,
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
} from '../domain/sessions/password';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const USAGE = `usage:
  npm run admin -- create-workspace --name NAME --slug SLUG --login LOGIN [--days N] [--scopes s1,s2]
  npm run admin -- create-token --workspace SLUG --login LOGIN --name NAME [--days N] [--scopes s1,s2]
  npm run admin -- set-decision-policy --workspace SLUG [--quorum N] [--reminder-hours H]
  npm run admin -- set-assistant-limits --workspace SLUG [--user-daily N] [--workspace-daily N]
      [--monthly-usd USD] [--max-output-tokens N] [--max-active-user N] [--max-active-workspace N]
      [--time-zone ZONE]   (omitted values keep their current setting)
  npm run admin -- set-password --login LOGIN [--password-stdin]   (else a generated one is printed)
  npm run admin -- add-member --workspace SLUG --login LOGIN [--role member|admin|owner]
      [--display-name NAME] [--password-stdin]   (a login without a password gets one, printed once)
  npm run admin -- remove-member --workspace SLUG --login LOGIN
DATABASE_URL selects the database.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

/** The workspace with this slug, or a usage error naming it. */
async function workspaceOf(db: Knex, slug: string): Promise<{ id: string }> {
  const ws = await findWorkspaceBySlug(db, slug);
  if (!ws) fail(`no workspace with slug ${slug}`);
  return ws;
}

function scopesOf(text: string | undefined): ScopeName[] {
  if (!text) return [...SCOPES];
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) fail(`unknown scopes: ${unknown.join(', ')}`);
  return list as ScopeName[];
}

function daysOf(text: string | undefined): number {
  const days = text === undefined ? 90 : Number(text);
  if (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS)
    fail(`--days must be 1..${MAX_TOKEN_DAYS}`);
  return days;
}

function intOf(
  text: string | undefined,
  flag: string,
  bounds: { minimum: number; maximum: number },
) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < bounds.minimum || n > bounds.maximum)
    fail(`--${flag} must be an integer ${bounds.minimum}..${bounds.maximum}`);
  return n;
}

/** Applies the given assistant limits over the current ones; recorded as an audit event. */
async function setAssistantLimits(
  db: Knex,
  workspaceId: string,
  values: Record<string, string | boolean | undefined>,
): Promise<AssistantLimits & { version: number }> {
  const text = (k: string) => values[k] as string | undefined;
  return db.transaction(async (trx) => {
    const current = await limitsOfWorkspace(trx, workspaceId);
    const pick = <T>(v: T | undefined, fallback: T) => (v === undefined ? fallback : v);
    const int = (flag: string, bounds: { minimum: number; maximum: number }, fallback: number) =>
      pick(intOf(text(flag), flag, bounds), fallback);
    const l = current.limits;
    const limits: AssistantLimits = {
      user_daily_limit: int('user-daily', LIMIT_BOUNDS.daily, l.user_daily_limit),
      workspace_daily_limit: int('workspace-daily', LIMIT_BOUNDS.daily, l.workspace_daily_limit),
      monthly_limit_usd: pick(text('monthly-usd'), l.monthly_limit_usd),
      max_output_tokens: int(
        'max-output-tokens',
        LIMIT_BOUNDS.max_output_tokens,
        l.max_output_tokens,
      ),
      max_active_user_runs: int('max-active-user', LIMIT_BOUNDS.active, l.max_active_user_runs),
      max_active_workspace_runs: int(
        'max-active-workspace',
        LIMIT_BOUNDS.active,
        l.max_active_workspace_runs,
      ),
      time_zone: pick(text('time-zone'), l.time_zone),
    };
    const wrong = limitsProblems(limits);
    if (!wrong.length && !(await knownTimeZone(trx, limits.time_zone)))
      wrong.push({ pointer: '/time_zone', message: 'is not a time zone the database knows' });
    if (wrong.length) fail(wrong.map((p) => `${p.pointer.slice(1)} ${p.message}`).join('; '));
    limits.monthly_limit_usd = formatMicros(parseMicros(limits.monthly_limit_usd));
    const result = await replaceLimits(trx, workspaceId, current.version, limits, null);
    if (!result) fail('the limits changed meanwhile; run the command again');
    await recordSystemWrite(trx, 'system:admin', {
      workspaceId,
      action: 'assistant_limits.updated',
      resourceType: 'assistant_limits',
      resourceId: workspaceId,
      details: {
        before: { version: result.before.version, ...result.before.limits },
        after: { version: result.after.version, ...result.after.limits },
      },
    });
    return { ...result.after.limits, version: result.after.version };
  });
}

const ROLES = ['member', 'admin', 'owner'] as const;
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

/** A password from stdin, checked against the bounds; null when none was piped. */
async function passwordFromStdin(wanted: boolean | undefined): Promise<string | null> {
  if (!wanted) return null;
  const given = (await readStdin()).replace(/\r?\n$/, '');
  if (given.length < MIN_PASSWORD_LENGTH || given.length > MAX_PASSWORD_LENGTH)
    fail(`the password must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  return given;
}

/**
 * Adds a member to a workspace (approvals need a second person). A login that has no password
 * yet gets one: read from stdin, else generated and printed once; a login that already signs in
 * (a member elsewhere) keeps its password unless one is piped.
 */
async function addMemberCommand(
  db: Knex,
  values: Record<string, string | boolean | undefined>,
): Promise<string> {
  const slug = values.workspace as string | undefined;
  const login = values.login as string | undefined;
  if (!slug || !login) fail('add-member needs --workspace and --login');
  if (!LOGIN.test(login))
    fail(
      '--login: 1 to 100 letters, digits, dots, dashes, underscores or @, starting with a letter or digit',
    );
  const role = (values.role as string | undefined) ?? 'member';
  if (!(ROLES as readonly string[]).includes(role))
    fail(`--role must be one of ${ROLES.join(', ')}`);
  const displayName = values['display-name'] as string | undefined;
  if (displayName !== undefined && (displayName.length < 1 || displayName.length > 200))
    fail('--display-name must have 1 to 200 characters');
  const ws = await workspaceOf(db, slug);
  const piped = await passwordFromStdin(values['password-stdin'] as boolean | undefined);
  return db.transaction(async (trx) => {
    const added = await addMember(trx, { workspaceId: ws.id, login, role, displayName });
    if (!added) fail(`${login} is already a member of ${slug}`);
    const hasPassword = (await passwordHashOf(trx, login)) !== null;
    const password = piped ?? (hasPassword ? null : generatePassword());
    if (password !== null) await setPasswordHash(trx, login, await hashPassword(password));
    await recordSystemWrite(trx, 'system:admin', {
      workspaceId: ws.id,
      action: added.restored ? 'member.restored' : 'member.added',
      resourceType: 'member',
      resourceId: added.member.id,
      details: { login, role },
    });
    const lines = [`member_id=${added.member.id}`, `login=${login}`, `role=${role}`];
    if (password !== null && piped === null) lines.push(`password=${password}`);
    else if (password !== null) lines.push('password set');
    else lines.push('password unchanged (the login already signs in)');
    return `${lines.join('\n')}\n`;
  });
}

/** Removes a member: history keeps its name; its tokens, grants and access end now. */
async function removeMemberCommand(
  db: Knex,
  values: Record<string, string | boolean | undefined>,
): Promise<string> {
  const slug = values.workspace as string | undefined;
  const login = values.login as string | undefined;
  if (!slug || !login) fail('remove-member needs --workspace and --login');
  const ws = await workspaceOf(db, slug);
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, ws.id);
    const member = await findMemberByLogin(trx, ws.id, login);
    if (!member) fail(`no member ${login} in ${slug}`);
    if (member.role === 'owner' && (await countMembersWithRole(trx, ws.id, 'owner')) <= 1)
      fail(`${login} is the last owner of ${slug}; add another owner first`);
    const revoked = await removeMember(trx, member.id);
    await recordSystemWrite(trx, 'system:admin', {
      workspaceId: ws.id,
      action: 'member.removed',
      resourceType: 'member',
      resourceId: member.id,
      details: {
        login,
        revoked_tokens: revoked.revokedTokens,
        revoked_grants: revoked.revokedGrants,
      },
    });
    return `member_id=${member.id}\nremoved=${login}\nrevoked_tokens=${revoked.revokedTokens}\nrevoked_grants=${revoked.revokedGrants}\n`;
  });
}

/** Flags parsed strictly; a wrong flag is a usage error (exit 2) like every other. */
function parseFlags(rest: string[]) {
  try {
    return parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        slug: { type: 'string' },
        login: { type: 'string' },
        workspace: { type: 'string' },
        days: { type: 'string' },
        scopes: { type: 'string' },
        quorum: { type: 'string' },
        'reminder-hours': { type: 'string' },
        'user-daily': { type: 'string' },
        'workspace-daily': { type: 'string' },
        'monthly-usd': { type: 'string' },
        'max-output-tokens': { type: 'string' },
        'max-active-user': { type: 'string' },
        'max-active-workspace': { type: 'string' },
        'time-zone': { type: 'string' },
        'password-stdin': { type: 'boolean' },
        role: { type: 'string' },
        'display-name': { type: 'string' },
      },
      strict: true,
    });
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseFlags(rest);
  const url = loadConfig().databaseUrl;
  if (!url)
    fail('DATABASE_URL is required (the URL npm start prints in its log, or your own server).');
  const db = createDb(url);
  try {
    await migrateLatest(db);
    if (command === 'create-workspace') {
      if (!values.name || !values.slug || !values.login)
        fail('create-workspace needs --name, --slug and --login');
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(values.slug))
        fail('--slug: lowercase letters, digits and dashes');
      if (await findWorkspaceBySlug(db, values.slug))
        fail(`a workspace with slug ${values.slug} exists`);
      const made = await createWorkspaceWithOwner(db, {
        name: values.name,
        slug: values.slug,
        login: values.login,
        scopes: scopesOf(values.scopes),
        days: daysOf(values.days),
      });
      process.stdout.write(
        `workspace_id=${made.workspace.id}\nmember_id=${made.member.id}\ntoken=${made.token.token}\nexpires_at=${made.token.expiresAt.toISOString()}\n`,
      );
    } else if (command === 'create-token') {
      if (!values.workspace || !values.login || !values.name)
        fail('create-token needs --workspace, --login and --name');
      const ws = await workspaceOf(db, values.workspace);
      const member = await findMemberByLogin(db, ws.id, values.login);
      if (!member) fail(`no member ${values.login} in ${values.workspace}`);
      const token = await issueToken(db, {
        workspaceId: ws.id,
        memberId: member.id,
        name: values.name,
        scopes: scopesOf(values.scopes),
        days: daysOf(values.days),
      });
      process.stdout.write(`token=${token.token}\nexpires_at=${token.expiresAt.toISOString()}\n`);
    } else if (command === 'set-decision-policy') {
      if (!values.workspace) fail('set-decision-policy needs --workspace');
      const ws = await workspaceOf(db, values.workspace);
      const quorum = values.quorum === undefined ? undefined : Number(values.quorum);
      if (quorum !== undefined && !(Number.isInteger(quorum) && quorum >= 1 && quorum <= 20))
        fail('--quorum must be an integer 1..20');
      const hours =
        values['reminder-hours'] === undefined ? undefined : Number(values['reminder-hours']);
      if (hours !== undefined && !(Number.isFinite(hours) && hours > 0 && hours <= 24 * 365))
        fail('--reminder-hours must be a number of hours above 0 (at most a year)');
      const policy = await setPolicy(db, ws.id, {
        quorum,
        reminder_interval_seconds:
          hours === undefined ? undefined : Math.max(1, Math.round(hours * 3600)),
      });
      process.stdout.write(
        `quorum=${policy.quorum}\nreminder_interval_hours=${policy.reminder_interval_seconds / 3600}\npolicy_version=${policy.version}\n`,
      );
    } else if (command === 'set-assistant-limits') {
      if (!values.workspace) fail('set-assistant-limits needs --workspace');
      const ws = await workspaceOf(db, values.workspace);
      const limits = await setAssistantLimits(db, ws.id, values);
      process.stdout.write(
        `${Object.entries(limits)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join('\n')}\n`,
      );
    } else if (command === 'set-password') {
      if (!values.login) fail('set-password needs --login');
      if (!(await loginExists(db, values.login))) fail(`no member has the login ${values.login}`);
      const given = await passwordFromStdin(values['password-stdin']);
      const password = given ?? generatePassword();
      await setPasswordHash(db, values.login, await hashPassword(password));
      process.stdout.write(
        given === null
          ? `login=${values.login}\npassword=${password}\n`
          : `login=${values.login}\npassword set\n`,
      );
    } else if (command === 'add-member') {
      process.stdout.write(await addMemberCommand(db, values));
    } else if (command === 'remove-member') {
      process.stdout.write(await removeMemberCommand(db, values));
    } else {
      fail(command ? `unknown command ${command}` : 'no command');
    }
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
