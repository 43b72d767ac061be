/**
 * Builds the Koa router from the operation registry. For each operation, in order: credentials
 * and scope (401/403), path parameters, workspace tenancy (another workspace answers 404),
 * query, body (415/413/400), handler, and optionally response validation.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { TSchema } from '@sinclair/typebox';
import { ApiError, problems } from '../errors';
import type { AppServices } from '../services';
import type { RequestState } from '../middleware';
import { compileValidator, type Validator } from './validation';
import type { AnyOperation, Principal } from './operation';

/** `/v1/workspaces/{workspace_id}` -> `/v1/workspaces/:workspace_id`. */
export function koaPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  return ctx.get('Transfer-Encoding') !== '' || (length !== '' && length !== '0');
}

async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is('application/json')) {
    throw problems.unsupportedMediaType(ctx.get('Content-Type') || undefined, ['application/json']);
  }
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > limit) throw problems.payloadTooLarge(limit);
  const text = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw problems.malformedJson((err as Error).message);
  }
}

function authorize(op: AnyOperation, state: RequestState): Principal | undefined {
  if (op.access.kind === 'public') return undefined;
  if (!state.principal) throw state.authError ?? problems.missingToken();
  if (op.access.kind === 'scope' && !state.principal.scopes.has(op.access.scope)) {
    throw problems.insufficientScope([op.access.scope]);
  }
  return state.principal;
}

interface Compiled {
  params?: Validator;
  query?: Validator;
  body?: Validator;
  response?: Validator;
}

function compile(op: AnyOperation): Compiled {
  return {
    params: op.params ? compileValidator(op.params, 'path') : undefined,
    query: op.query ? compileValidator(op.query, 'query') : undefined,
    body: op.body ? compileValidator(op.body as TSchema, 'body') : undefined,
    response: op.success.schema
      ? compileValidator(op.success.schema as TSchema, 'body')
      : undefined,
  };
}

function check(validator: Validator | undefined, value: unknown): void {
  if (!validator) return;
  const errors = validator(value);
  if (errors.length > 0) throw problems.validationFailed(errors);
}

export function buildRouter(operations: readonly AnyOperation[], services: AppServices): Router {
  const router = new Router();
  for (const op of operations) {
    const v = compile(op);
    router[op.method](op.operationId, koaPath(op.path), async (ctx: Context) => {
      const state = ctx.state as RequestState;
      const principal = authorize(op, state);

      const params: Record<string, unknown> = { ...ctx.params };
      check(v.params, params);
      if (principal && 'workspace_id' in params && params.workspace_id !== principal.workspaceId) {
        throw problems.notFound(`Workspace ${String(params.workspace_id)}`);
      }

      const query: Record<string, unknown> = { ...ctx.query };
      if (v.query) check(v.query, query);
      else if (Object.keys(query).length > 0) {
        throw problems.validationFailed(
          Object.keys(query).map((k) => ({
            in: 'query',
            path: `/${k}`,
            message: 'is not a known property',
          })),
        );
      }

      let body: unknown = undefined;
      if (op.body) {
        body = await readJsonBody(ctx, services.config.bodyLimitBytes);
        if (body === undefined) {
          throw problems.validationFailed([
            { in: 'body', path: '', message: 'a JSON request body is required' },
          ]);
        }
        check(v.body, body);
      }

      const result = await op.handler({
        params,
        query,
        body,
        principal: principal as Principal,
        services,
        db: services.db,
        requestId: state.requestId,
        log: state.log,
        koa: ctx,
      });

      if (services.config.validateResponses && v.response) {
        const errors = v.response(result);
        if (errors.length > 0) {
          state.log.error(
            { operation: op.operationId, errors },
            'response does not match its schema',
          );
          throw new ApiError({
            ...problemsInternal(),
            detail: `Response of ${op.operationId} broke its schema.`,
          });
        }
      }
      ctx.status = op.success.status;
      if (op.success.status !== 204) {
        if (op.success.contentType) ctx.type = op.success.contentType;
        ctx.body = result;
      }
    });
  }
  return router;
}

function problemsInternal() {
  const p = problems.internal();
  return { status: p.status, code: p.code, title: p.title, hint: p.hint };
}
