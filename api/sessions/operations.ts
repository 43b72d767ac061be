/** Who is calling: the member behind a token, an MCP client's grant or a signed-in session. */
import { Type } from '@sinclair/typebox';
import { memberById } from '../../db/workspaces';
import { problems } from '../errors';
import { defineOperation, type Principal, operationGroup, route } from '../registry/operation';
import { DateTime, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';
import { Scope } from '../tokens/schemas';
import { CSRF_HEADER } from './principal';

const Role = LiteralUnion(['owner', 'admin', 'member'] as const, {
  description: "The member's role in that workspace.",
});

const CallerWorkspace = Strict('CallerWorkspace', {
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  role: Role,
});

export const CallerResponse = Strict(
  'CallerResponse',
  {
    credential: LiteralUnion(['token', 'session', 'oauth'] as const, {
      description:
        'What authenticated the request: an API token, a signed-in session (the console) or an MCP client.',
    }),
    member_id: Uuid(),
    login: Type.String(),
    role: Role,
    workspace_id: Uuid({ description: 'The workspace this request acted in.' }),
    workspaces: Type.Array(CallerWorkspace, {
      description:
        "Every workspace the caller can act in: a token's or a grant's one, a session's all.",
    }),
    scopes: Type.Array(Scope, { description: 'Scopes held (a session: its role scopes).' }),
    expires_at: Nullable(DateTime({ description: 'When the credential expires.' })),
    csrf_token: Nullable(
      Type.String({
        description: `A session's CSRF token, to send as ${CSRF_HEADER} on every unsafe method; null for other credentials.`,
      }),
    ),
  },
  { description: 'The caller of this request.' },
);

type RoleName = 'owner' | 'admin' | 'member';

function workspaceOf(p: Principal, role: string) {
  return { id: p.workspace.id, name: p.workspace.name, slug: p.workspace.slug, role };
}

const META = operationGroup('Meta');

export const getCurrentCaller = defineOperation({
  operationId: 'getCurrentCaller',
  ...route.get('/v1/caller'),
  summary: 'Who is making this request',
  description: `The member behind the credential, their role, the workspaces they can act in and the scopes held. With a session (the console's cookie) it also gives the CSRF token every unsafe method must carry as ${CSRF_HEADER}.`,
  ...META.token('any credential can read who it is.'),
  success: {
    status: 200,
    description: 'The caller.',
    schema: CallerResponse,
    headers: { 'Cache-Control': { description: 'no-store: the CSRF token is per browser.' } },
  },
  handler: async ({ db, principal, services, koa }) => {
    const session = principal.session;
    const role = session?.role ?? (await memberById(db, principal.memberId))?.role;
    if (!role) throw problems.notFound('Member');
    koa.set('Cache-Control', 'no-store');
    return {
      credential: session
        ? ('session' as const)
        : principal.oauth
          ? ('oauth' as const)
          : ('token' as const),
      member_id: principal.memberId,
      login: principal.memberLogin,
      role: role as RoleName,
      workspace_id: principal.workspaceId,
      workspaces: (session?.workspaces ?? [workspaceOf(principal, role)]).map((w) => ({
        id: w.id,
        name: w.name,
        slug: w.slug,
        role: w.role as RoleName,
      })),
      scopes: [...principal.scopes].sort(),
      expires_at: (session?.expiresAt ?? principal.expiresAt).toISOString(),
      csrf_token: session ? await services.oauth.sessions.csrfToken(koa) : null,
    };
  },
});
