/**
 * Creating a workspace with its first member and token: used by the operator command
 * (`npm run admin -- create-workspace`) and by `npm start`'s demo seed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { generateToken, parseToken, secretMatches } from '../domain/tokens/rules';
import { insertToken, findTokenByPrefix } from '../db/tokens';
import {
  findMemberByLogin,
  findWorkspaceBySlug,
  insertMember,
  insertWorkspace,
} from '../db/workspaces';
import { findRepositoryByName, insertRepository } from '../db/repositories';
import { recordWrite, type WriteRecord } from '../db/activity';
import { SCOPES, type ScopeName } from '../domain/contract/values';
import { passwordHashOf, setPasswordHash } from '../db/sessions';
import { generatePassword, hashPassword, verifyPassword } from '../domain/sessions/password';

/**
 * The write records of a change no member made: `actor` names who did (`system` for npm start's
 * bootstrap, `system:admin` for the admin command).
 */
export async function recordSystemWrite(
  db: Knex,
  actor: 'system' | 'system:admin',
  write: Pick<WriteRecord, 'workspaceId' | 'action' | 'resourceType' | 'resourceId' | 'details'>,
): Promise<void> {
  await recordWrite(db, {
    ...write,
    actorId: null,
    actorLogin: actor,
    tokenId: null,
    requestId: null,
  });
}

export interface IssuedToken {
  id: string;
  prefix: string;
  token: string;
  expiresAt: Date;
}

const DAY = 86_400_000;

/** Issues a token for a member, recording it as a system action. */
export async function issueToken(
  db: Knex,
  input: {
    workspaceId: string;
    memberId: string;
    name: string;
    scopes: readonly ScopeName[];
    days: number;
  },
): Promise<IssuedToken> {
  const secret = generateToken();
  const row = await insertToken(db, {
    workspaceId: input.workspaceId,
    memberId: input.memberId,
    createdByTokenId: null,
    name: input.name,
    prefix: secret.prefix,
    secretSha256: secret.secretSha256,
    scopes: [...input.scopes],
    expiresAt: new Date(Date.now() + input.days * DAY),
  });
  await recordSystemWrite(db, 'system', {
    workspaceId: input.workspaceId,
    action: 'api_token.created',
    resourceType: 'api_token',
    resourceId: row.id,
    details: {
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      expires_at: row.expires_at.toISOString(),
      by: 'operator',
    },
  });
  return { id: row.id, prefix: row.prefix, token: secret.token, expiresAt: row.expires_at };
}

/** Creates a workspace, its owner and a first token, in one transaction. */
export async function createWorkspaceWithOwner(
  db: Knex,
  input: {
    name: string;
    slug: string;
    login: string;
    scopes?: readonly ScopeName[];
    days?: number;
  },
) {
  return db.transaction(async (trx) => {
    const workspace = await insertWorkspace(trx, { name: input.name, slug: input.slug });
    const member = await insertMember(trx, {
      workspaceId: workspace.id,
      login: input.login,
      role: 'owner',
    });
    await recordSystemWrite(trx, 'system', {
      workspaceId: workspace.id,
      action: 'workspace.created',
      resourceType: 'workspace',
      resourceId: workspace.id,
      details: { name: workspace.name, slug: workspace.slug, owner: member.login },
    });
    const token = await issueToken(trx, {
      workspaceId: workspace.id,
      memberId: member.id,
      name: `${input.login} (bootstrap)`,
      scopes: input.scopes ?? SCOPES,
      days: input.days ?? 90,
    });
    return { workspace, member, token };
  });
}

export interface Demo {
  workspaceId: string;
  repositoryId: string;
  token: string;
}

/**
 * The demo of `npm start`: a workspace `demo` with member `demo`, a repository pointing at the
 * demo shop repository (platform/demo-repo.ts, made under the data folder), and a token holding all 25 scopes, written to <dataDir>/demo-token.
 * Created once; later starts reuse it (a new token is issued only if the saved one stopped working).
 */
export async function ensureDemo(db: Knex, dataDir: string, repositoryUrl: string): Promise<Demo> {
  const tokenFile = path.join(dataDir, 'demo-token');
  let workspace = await findWorkspaceBySlug(db, 'demo');
  if (!workspace) {
    const created = await createWorkspaceWithOwner(db, {
      name: 'Demo',
      slug: 'demo',
      login: 'demo',
      days: 365,
    });
    workspace = created.workspace;
    fs.writeFileSync(tokenFile, `${created.token.token}\n`, { mode: 0o600 });
  }
  const member = (await findMemberByLogin(db, workspace.id, 'demo'))!;
  let repository = await findRepositoryByName(db, workspace.id, 'demo');
  if (!repository) {
    repository = await db.transaction(async (trx) => {
      const repo = await insertRepository(trx, {
        workspaceId: workspace.id,
        name: 'demo',
        url: repositoryUrl,
        defaultBranch: 'main',
        description:
          'A small demo shop (services, compose, Kubernetes, Terraform, CI), registered by npm start.',
      });
      await recordSystemWrite(trx, 'system', {
        workspaceId: workspace.id,
        action: 'repository.created',
        resourceType: 'repository',
        resourceId: repo.id,
        details: { name: repo.name, url: repo.url },
      });
      return repo;
    });
  }
  const saved = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').trim() : '';
  if (!(await tokenWorks(db, saved))) {
    const issued = await issueToken(db, {
      workspaceId: workspace.id,
      memberId: member.id,
      name: 'demo',
      scopes: SCOPES,
      days: 365,
    });
    fs.writeFileSync(tokenFile, `${issued.token}\n`, { mode: 0o600 });
    return { workspaceId: workspace.id, repositoryId: repository.id, token: issued.token };
  }
  return { workspaceId: workspace.id, repositoryId: repository.id, token: saved };
}

async function tokenWorks(db: Knex, text: string): Promise<boolean> {
  const parsed = parseToken(text);
  if (!parsed) return false;
  const row = await findTokenByPrefix(db, parsed.prefix);
  return (
    !!row &&
    secretMatches(parsed.secret, row.secret_sha256) &&
    !row.revoked_at &&
    row.expires_at.getTime() > Date.now() + DAY
  );
}

/**
 * The demo member's password, for the sign-in page of the MCP consent flow: generated once,
 * kept (like the token) in <dataDir>/demo-password, and set again if the stored hash no longer
 * matches the file.
 */
export async function ensureDemoPassword(db: Knex, dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'demo-password');
  const saved = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  if (saved && (await verifyPassword(saved, await passwordHashOf(db, 'demo')))) return saved;
  const password = generatePassword();
  await setPasswordHash(db, 'demo', await hashPassword(password));
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}
