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
 *
 * The token is printed once; only its SHA-256 is stored.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../platform/config';
import { createDb } from '../db/connection';
import { migrateLatest } from '../db/migrate';
import { createWorkspaceWithOwner, issueToken } from '../platform/bootstrap';
import { findMemberByLogin, findWorkspaceBySlug } from '../db/workspaces';
import { MAX_TOKEN_DAYS } from '../domain/tokens/rules';
import { setPolicy } from '../db/decisions';
import { SCOPES, type ScopeName } from '../domain/contract/values';
import { knownTimeZone, limitsOfWorkspace, replaceLimits } from '../db/assistant';
import { recordWrite } from '../db/activity';
import { LIMIT_BOUNDS, limitsProblems, type AssistantLimits } from '../domain/assistant/limits';
import { formatMicros, parseMicros } from '../domain/audits/pricing';
import type { Knex } from 'knex';
import { loginExists, setPasswordHash } from '../db/sessions';
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
DATABASE_URL selects the database.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
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
    const l = current.limits;
    const limits: AssistantLimits = {
      user_daily_limit: pick(
        intOf(text('user-daily'), 'user-daily', LIMIT_BOUNDS.daily),
        l.user_daily_limit,
      ),
      workspace_daily_limit: pick(
        intOf(text('workspace-daily'), 'workspace-daily', LIMIT_BOUNDS.daily),
        l.workspace_daily_limit,
      ),
      monthly_limit_usd: pick(text('monthly-usd'), l.monthly_limit_usd),
      max_output_tokens: pick(
        intOf(text('max-output-tokens'), 'max-output-tokens', LIMIT_BOUNDS.max_output_tokens),
        l.max_output_tokens,
      ),
      max_active_user_runs: pick(
        intOf(text('max-active-user'), 'max-active-user', LIMIT_BOUNDS.active),
        l.max_active_user_runs,
      ),
      max_active_workspace_runs: pick(
        intOf(text('max-active-workspace'), 'max-active-workspace', LIMIT_BOUNDS.active),
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
    await recordWrite(trx, {
      workspaceId,
      actorId: null,
      actorLogin: 'system:admin',
      tokenId: null,
      requestId: null,
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

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
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
    },
    strict: true,
  });
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
      const ws = await findWorkspaceBySlug(db, values.workspace);
      if (!ws) fail(`no workspace with slug ${values.workspace}`);
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
      const ws = await findWorkspaceBySlug(db, values.workspace);
      if (!ws) fail(`no workspace with slug ${values.workspace}`);
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
      const ws = await findWorkspaceBySlug(db, values.workspace);
      if (!ws) fail(`no workspace with slug ${values.workspace}`);
      const limits = await setAssistantLimits(db, ws.id, values);
      process.stdout.write(
        `${Object.entries(limits)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join('\n')}\n`,
      );
    } else if (command === 'set-password') {
      if (!values.login) fail('set-password needs --login');
      if (!(await loginExists(db, values.login))) fail(`no member has the login ${values.login}`);
      const given = values['password-stdin'] ? (await readStdin()).replace(/\r?\n$/, '') : null;
      if (
        given !== null &&
        (given.length < MIN_PASSWORD_LENGTH || given.length > MAX_PASSWORD_LENGTH)
      )
        fail(`the password must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
      const password = given ?? generatePassword();
      await setPasswordHash(db, values.login, await hashPassword(password));
      process.stdout.write(
        given === null
          ? `login=${values.login}\npassword=${password}\n`
          : `login=${values.login}\npassword set\n`,
      );
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
