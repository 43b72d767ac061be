/**
 * MCP tools generated from the operation registry: one tool per operation an agent can use, its
 * input schema made of the operation's path parameters (but the workspace, which the grant
 * fixes), its query parameters and, under `body`, its request body schema; its description and
 * annotations from the operation. A call is checked against that schema, then run as the REST
 * request it stands for (dispatch.ts), so scopes, tenancy, validation, rate limits and audit
 * events are the REST API's own.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyOperation } from '../registry/operation';
import { compileValidator, type Validator } from '../registry/validation';
import type { ScopeName } from '../../domain/contract/values';
import type { DispatchRequest } from './dispatch';
import { TOOL_DEFAULT_PAGE_SIZE } from './bounds';

/** Operations no MCP client gets: credentials and grants are managed by people, not agents. */
const NOT_TOOLS = new Set([
  'getCurrentToken',
  'listApiTokens',
  'getApiToken',
  'createApiToken',
  'revokeApiToken',
  'listOAuthGrants',
  'revokeOAuthGrant',
]);

export interface GeneratedTool {
  name: string;
  operation: AnyOperation;
  /** Null: any token may call it (the handler applies its own rule). */
  scope: ScopeName | null;
  readOnly: boolean;
  definition: Tool;
  validate: Validator;
  /** The REST request a call with valid `args` stands for. */
  request(workspaceId: string, args: Record<string, unknown>): DispatchRequest;
}

/** `getRepositoryArchitecture` -> `get_repository_architecture`. */
export function toolName(operationId: string): string {
  return operationId.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function plain(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

function propertiesOf(schema: TObject | undefined): Record<string, TSchema> {
  return (schema?.properties ?? {}) as Record<string, TSchema>;
}

function exposed(op: AnyOperation): boolean {
  if (op.access.kind === 'public' || NOT_TOOLS.has(op.operationId) || op.rawBody) return false;
  if (!op.path.startsWith('/v1/workspaces/{workspace_id}/')) return false;
  // Binary answers (archives, attachment bytes) are no use to a model.
  const types = [op.success.contentType ?? 'application/json'].flat();
  return types.some((t) => t.startsWith('application/json') || t.startsWith('text/'));
}

function generate(op: AnyOperation): GeneratedTool {
  const params = Object.fromEntries(
    Object.entries(propertiesOf(op.params)).filter(([k]) => k !== 'workspace_id'),
  );
  const query = propertiesOf(op.query);
  const properties: Record<string, TSchema> = { ...params, ...query };
  // AI clients hold small answers: a list without a limit is a short page (bounds.ts). The
  // validator fills defaults, so the tool's own schema carries this one.
  if (query.limit) properties.limit = { ...query.limit, default: TOOL_DEFAULT_PAGE_SIZE };
  const required = [
    ...Object.keys(params),
    ...((op.query?.required as string[] | undefined) ?? []),
  ];
  if (op.body) {
    properties.body = op.body;
    required.push('body');
  }
  const schema = {
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  } as unknown as TSchema;
  const readOnly = op.method === 'get';
  const scope = op.access.kind === 'scope' ? op.access.scope : null;
  const name = toolName(op.operationId);
  const description = [
    op.summary,
    op.description,
    'limit' in query
      ? `Pages of ${TOOL_DEFAULT_PAGE_SIZE} items unless limit says otherwise; pass next_cursor as cursor for the next page.`
      : undefined,
    scope ? `Scope: ${scope}.` : undefined,
    `REST: ${op.method.toUpperCase()} ${op.path} (${op.operationId}).`,
  ]
    .filter(Boolean)
    .join('\n\n');
  return {
    name,
    operation: op,
    scope,
    readOnly,
    validate: compileValidator(schema, 'body'),
    definition: {
      name,
      title: op.summary,
      description,
      inputSchema: plain(schema) as Tool['inputSchema'],
      annotations: {
        title: op.summary,
        readOnlyHint: readOnly,
        destructiveHint: op.method === 'delete' || /^(cancel|revoke|delete)/.test(op.operationId),
        idempotentHint: op.method === 'get' || op.method === 'put' || op.method === 'delete',
        openWorldHint: false,
      },
    },
    request(workspaceId, args) {
      const path = op.path.replace(/\{([a-z_]+)\}/g, (_, key: string) =>
        encodeURIComponent(key === 'workspace_id' ? workspaceId : String(args[key])),
      );
      const q: Record<string, string> = {};
      for (const key of Object.keys(query)) {
        const value = args[key];
        if (value !== undefined && value !== null) q[key] = String(value);
      }
      if ('limit' in query && q.limit === undefined) q.limit = String(TOOL_DEFAULT_PAGE_SIZE);
      return { method: op.method, path, query: q, body: op.body ? args.body : undefined };
    },
  };
}

/** Every generated tool, by name. */
export function generateTools(operations: readonly AnyOperation[]): Map<string, GeneratedTool> {
  return new Map(operations.filter(exposed).map((op) => [toolName(op.operationId), generate(op)]));
}

/** Whether a principal holding `scopes` is shown (and may call) a tool. */
export function toolVisible(
  tool: { readOnly: boolean; scope: ScopeName | null },
  scopes: ReadonlySet<ScopeName>,
): boolean {
  return tool.readOnly || tool.scope === null || scopes.has(tool.scope);
}
