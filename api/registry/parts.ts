/**
 * Parts the operations of every family are built from, so that a read, a page or a
 * workflow-starting create is a few declarative lines: load-or-404, a keyset page presented, the
 * start of a workflow a resource owns (run once per id), and the version a versioned update
 * expects (`If-Match` or `expected_version`).
 */
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { keysetPage, type Keyset, type KeysetRow } from '../../db/paginate';
import { REPOSITORY_ID, WORKSPACE_ID } from '../../domain/workflow-starts';
import { problems, type ApiError } from '../errors';
import type { PageQuery } from '../schema-kit';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { AnyOperation, OperationContext, OperationSpec, Principal } from './operation';
import type { AppServices } from '../services';
import { pageRequest, recordPrincipalWrite } from '../shared';
import type { Knex } from 'knex';

/** The row `lookup` finds, or 404 not_found naming `what` ("Audit <id>"). */
export async function found<T>(lookup: Promise<T | null | undefined>, what: string): Promise<T> {
  const row = await lookup;
  if (!row) throw problems.notFound(what);
  return row;
}

/** One keyset page of `rows` (from the validated limit/cursor), each item presented. */
export async function pageOf<Row extends KeysetRow, Item>(
  query: PageQuery,
  rows: Keyset<Row>,
  present: (row: Row) => Item,
): Promise<{ items: Item[]; next_cursor: string | null }> {
  return pageOfAll(query, rows, (items) => items.map(present));
}

/** One keyset page of `rows`, presented together (a batch read of what the items carry). */
export async function pageOfAll<Row extends KeysetRow, Item>(
  query: PageQuery,
  rows: Keyset<Row>,
  present: (rows: Row[]) => Item[] | Promise<Item[]>,
): Promise<{ items: Item[]; next_cursor: string | null }> {
  const page = await keysetPage(rows, pageRequest(query));
  return { ...page, items: await present(page.items) };
}

type ItemOf<R extends TSchema> = Static<R> extends { items: Array<infer I> } ? I : never;
type ListContext<P extends TObject, Q extends TObject> = OperationContext<
  Static<P>,
  Static<Q>,
  undefined
>;

/**
 * Declares a keyset-paged list: `rows` picks the rows (after any 404 of what they belong to) and
 * `present` shapes each one (or `presentAll` the page at once, a batch read of what the items
 * carry); the handler is the page of them.
 */
export function listOperation<
  P extends TObject,
  Q extends TObject,
  R extends TSchema,
  Row extends KeysetRow,
>(
  spec: Omit<OperationSpec<P, Q, undefined, R>, 'handler'> & {
    rows: (ctx: ListContext<P, Q>) => Keyset<Row> | Promise<Keyset<Row>>;
  } & (
      | { present: (row: Row) => ItemOf<R> }
      | { presentAll: (rows: Row[], ctx: ListContext<P, Q>) => Promise<Array<ItemOf<R>>> }
    ),
): OperationSpec<P, Q, undefined, R> {
  const { rows, ...declared } = spec;
  const present = 'present' in spec ? spec.present : undefined;
  const presentAll = 'presentAll' in spec ? spec.presentAll : undefined;
  delete (declared as { present?: unknown }).present;
  delete (declared as { presentAll?: unknown }).presentAll;
  // Typed loosely (as AnyOperation is): Static<R> of a page schema is too deep to compare.
  const handler: AnyOperation['handler'] = async (ctx: ListContext<P, Q>) => {
    const keyset = await rows(ctx);
    const query = ctx.query as PageQuery;
    return present
      ? pageOf(query, keyset, present)
      : pageOfAll(query, keyset, (page) => presentAll!(page, ctx));
  };
  return { ...declared, handler } as unknown as OperationSpec<P, Q, undefined, R>;
}

/**
 * Starts the workflow a resource owns, once: a second start with the same id (a retried request)
 * is refused by Temporal, which commitThenStart counts as done. The workspace (and repository,
 * when given) are its search attributes.
 */
export async function startOwnedWorkflow(
  services: AppServices,
  type: string,
  start: {
    workflowId: string;
    args: unknown[];
    workspaceId?: string;
    repositoryId?: string | null;
  },
): Promise<void> {
  const client = await services.temporal.client();
  const attributes = [
    ...(start.workspaceId ? [{ key: WORKSPACE_ID, value: start.workspaceId }] : []),
    ...(start.repositoryId !== undefined
      ? [{ key: REPOSITORY_ID, value: start.repositoryId ?? '' }]
      : []),
  ];
  await client.workflow.start(type, {
    workflowId: start.workflowId,
    taskQueue: services.config.taskQueue,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: start.args,
    ...(attributes.length ? { typedSearchAttributes: attributes } : {}),
  });
}

/** `If-Match: "3"` (or `3`, or `W/"3"`) -> 3; absent -> null; anything else is a 400. */
export function ifMatchVersion(header: string, what: string): number | null {
  if (!header) return null;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!m)
    throw problems.validationFailed([
      { in: 'header', path: '/If-Match', message: `must be the ${what} version, as "<version>"` },
    ]);
  return Number(m[1]);
}

/** 409 version_mismatch: a versioned update named a version the resource is no longer at. */
export function versionMismatch(
  what: string,
  current: number,
  expected: number,
  readOperation: string,
): ApiError {
  return problems.conflict(
    'version_mismatch',
    `The current version of the ${what} is ${current}, not ${expected}.`,
    `Read the ${what} again (${readOperation}) and retry with its current version.`,
    { current_version: current },
  );
}

/**
 * The last step of a write's transaction: records the calling member's write of `row` (its id;
 * the resource type is the action's noun, `repository` of `repository.created`, unless
 * `resourceType` names another) and answers the row.
 */
export async function recordedWrite<Row extends { id: string }>(
  trx: Knex,
  principal: Principal,
  requestId: string,
  row: Row,
  what: { action: string; details: Record<string, unknown>; resourceType?: string },
): Promise<Row> {
  await recordPrincipalWrite(trx, principal, requestId, {
    action: what.action,
    resourceType: what.resourceType ?? what.action.slice(0, what.action.indexOf('.')),
    resourceId: row.id,
    details: what.details,
  });
  return row;
}

/** The `?format=` query of an operation that answers several renderings, `json` by default. */
export function formatQuery<F extends string>(formats: readonly F[], description: string) {
  return Type.Object(
    {
      format: Type.Optional(
        Type.Union(
          formats.map((f) => Type.Literal(f)),
          { default: 'json', description },
        ),
      ),
    },
    { additionalProperties: false },
  );
}
