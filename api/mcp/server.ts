/**
 * The MCP endpoint, /mcp: Streamable HTTP (stateless: every POST carries its own bearer token
 * and gets a fresh server, so any API replica answers), built on @modelcontextprotocol/sdk.
 * 401 answers carry `WWW-Authenticate: Bearer resource_metadata=...` (RFC 9728), as the MCP
 * authorization spec requires. Each tool call is an audit event naming the OAuth client.
 */
import crypto from 'node:crypto';
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppServices } from '../services';
import { OPERATIONS } from '../operations';
import type { AnyOperation } from '../registry/operation';
import { insertAuditEvent } from '../../db/oauth';
import { RateLimiter } from '../rate-limit';
import type { FieldError } from '../errors';
import { authenticateMcp, type McpPrincipal } from './auth';
import { generateTools, toolVisible } from './tools';
import { COMPOSITE_TOOLS, listResources, readResource, RESOURCE_TEMPLATES } from './composite';
import type { Dispatch, DispatchResult } from './dispatch';
import { plainText, safeJson } from '../../domain/output/plain';
import { boundText, boundToolBody, TOOL_RESULT_MAX_CHARS } from './bounds';

const INSTRUCTIONS =
  'archaudit: evidence-based architecture audits. The workspace is fixed by your grant. Start with list_repositories, then audit_repository or get_repository_architecture; explain_entity cites the evidence behind an entity; gate_status gives the change gate of an audit.';

/** Media types whose bytes are text a model can read (the rest travel as a base64 blob). */
const TEXTUAL = /^(text\/|application\/(json|yaml|xml|[a-z.+-]+\+(json|xml))$|image\/svg\+xml$)/;

/**
 * A tool's answer. Text is plain text with control characters removed (domain/output/plain);
 * JSON is escaped so none shows raw. A file (an export's bytes) is text when its media type is
 * textual, else an embedded resource holding the bytes, named by the REST path it came from.
 */
export function toolResult(result: DispatchResult, path: string): CallToolResult {
  const isError = result.status >= 400;
  if (Buffer.isBuffer(result.body)) {
    if (TEXTUAL.test(result.type))
      return {
        content: [{ type: 'text', text: boundText(plainText(result.body.toString('utf8'))) }],
        isError,
      };
    if (result.body.length * 4 > TOOL_RESULT_MAX_CHARS * 3)
      return {
        content: [
          {
            type: 'text',
            text: `The file is ${result.body.length} bytes, over what a tool result carries (${TOOL_RESULT_MAX_CHARS} characters): download it over REST, GET ${path}.`,
          },
        ],
        isError,
      };
    return {
      content: [
        {
          type: 'resource',
          resource: {
            uri: `archaudit:${path}`,
            mimeType: result.type || 'application/octet-stream',
            blob: result.body.toString('base64'),
          },
        },
      ],
      isError,
    };
  }
  // Bounded for AI clients (bounds.ts): a long page, a whole graph or a long list is summarized.
  const body = boundToolBody(result.body);
  const pretty = typeof body === 'string' ? plainText(body) : safeJson(body, 2);
  const text = boundText(
    pretty.length <= TOOL_RESULT_MAX_CHARS || typeof body === 'string' ? pretty : safeJson(body),
  );
  const structured =
    !isError && body && typeof body === 'object' && !Array.isArray(body)
      ? { structuredContent: body as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text }], isError, ...structured };
}

function invalidParams(tool: string, errors: FieldError[]): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Invalid arguments for tool ${tool}: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`,
    { errors },
  );
}

export class McpGateway {
  private readonly tools;
  private readonly limiter: RateLimiter;

  constructor(
    private readonly services: AppServices,
    private readonly dispatch: Dispatch,
    operations: readonly AnyOperation[] = OPERATIONS,
    /** How often audit_repository polls its audit. */
    private readonly pollMs = 1000,
  ) {
    this.tools = generateTools(operations);
    this.limiter = new RateLimiter(
      services.config.rateLimitQuota,
      services.config.rateLimitWindowSeconds,
    );
  }

  private unauthorized(ctx: Context, error: string, description: string): void {
    const metadata = this.services.oauth.resourceMetadataUrl(ctx);
    const params = [
      `resource_metadata="${metadata}"`,
      ...(error === 'invalid_request'
        ? []
        : [`error="${error}"`, `error_description="${description.replace(/"/g, "'")}"`]),
    ];
    ctx.status = 401;
    ctx.set('WWW-Authenticate', `Bearer ${params.join(', ')}`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error, error_description: description };
  }

  async handle(ctx: Context): Promise<void> {
    // Browser-based MCP clients: the credential is a bearer token, never a cookie, so any origin
    // may call (the token is what is checked).
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set(
      'Access-Control-Expose-Headers',
      'WWW-Authenticate, Mcp-Session-Id, RateLimit, RateLimit-Policy, Retry-After',
    );
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set(
        'Access-Control-Allow-Headers',
        'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
      );
      ctx.set('Access-Control-Max-Age', '3600');
      return;
    }
    const ready = await this.services.oauth.provider(ctx);
    const auth = await authenticateMcp(
      this.services.db,
      ready,
      ctx.get('Authorization') || undefined,
    );
    if (!auth.ok) return this.unauthorized(ctx, auth.error, auth.description);
    const principal = auth.principal;
    const decision = this.limiter.hit(`mcp:${principal.oauth.grantId}`);
    ctx.set('RateLimit-Policy', this.limiter.policyHeader);
    ctx.set('RateLimit', RateLimiter.header(decision));
    if (!decision.allowed) {
      ctx.status = 429;
      ctx.set('Retry-After', String(decision.resetSeconds));
      ctx.body = {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: `Rate limited: retry in ${decision.resetSeconds} s.` },
      };
      return;
    }
    if (ctx.method !== 'POST') {
      // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      ctx.body = {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Method not allowed: POST JSON-RPC messages to /mcp.' },
      };
      return;
    }
    const server = this.server(principal, ctx.get('X-Request-ID') || crypto.randomUUID());
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res);
  }

  /** An MCP server for one request of one principal. */
  private server(principal: McpPrincipal, requestId: string): Server {
    const server = new Server(
      { name: 'archaudit', version: '0.1.0', title: 'archaudit architecture audits' },
      { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
    );
    const visibleGenerated = () =>
      [...this.tools.values()].filter((t) => toolVisible(t, principal.scopes));
    const visibleComposite = () => COMPOSITE_TOOLS.filter((t) => toolVisible(t, principal.scopes));

    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [...visibleComposite(), ...visibleGenerated()].map((t) => t.definition),
    }));

    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const record = (outcome: string, status?: number) =>
        insertAuditEvent(this.services.db, {
          id: crypto.randomUUID(),
          workspaceId: principal.workspaceId,
          actorId: principal.memberId,
          action: 'mcp.tool_called',
          resourceType: 'mcp_tool',
          requestId,
          details: {
            tool: name.slice(0, 200),
            outcome,
            ...(status !== undefined ? { status } : {}),
            oauth_client_id: principal.oauth.clientId,
            grant_id: principal.oauth.grantId,
          },
        });
      const composite = visibleComposite().find((t) => t.name === name);
      const generated = this.tools.get(name);
      const tool =
        composite ??
        (generated && toolVisible(generated, principal.scopes) ? generated : undefined);
      if (!tool) {
        await record('unknown_tool');
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      const errors = tool.validate(args);
      if (errors.length > 0) {
        await record('invalid_arguments');
        throw invalidParams(name, errors);
      }
      const progressToken = request.params._meta?.progressToken;
      const result = composite
        ? await composite.run(args, {
            principal,
            dispatch: this.dispatch,
            signal: extra.signal,
            pollMs: this.pollMs,
            progress: async (progress, total, message) => {
              if (progressToken === undefined) return;
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, total, message },
              });
            },
          })
        : await this.dispatch(principal, {
            ...generated!.request(principal.workspaceId, args),
            requestId,
          });
      await record(result.status < 400 ? 'ok' : 'error', result.status);
      return toolResult(
        result,
        composite ? `/tools/${name}` : generated!.request(principal.workspaceId, args).path,
      );
    });

    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: RESOURCE_TEMPLATES,
    }));
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: await listResources(principal, this.dispatch),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      const read = await readResource(uri, principal, this.dispatch);
      if (!read) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
      if (read.result.status >= 400) {
        throw new McpError(-32002, `Resource not available: ${uri}`, read.result.body);
      }
      const text = boundText(
        typeof read.result.body === 'string'
          ? plainText(read.result.body)
          : safeJson(boundToolBody(read.result.body)),
      );
      return { contents: [{ uri, mimeType: read.mimeType, text }] };
    });
    return server;
  }
}
