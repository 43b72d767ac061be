/**
 * Tools an agent needs beyond single operations (each made of registry operations run through
 * the same dispatch), and the MCP resources: a repository's architecture truth, its Mermaid
 * diagram, and decision briefs.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { compileValidator, type Validator } from '../registry/validation';
import { AuditCreate } from '../audits/schemas';
import type { ScopeName } from '../../domain/contract/values';
import type { Principal } from '../registry/operation';
import type { Dispatch, DispatchResult } from './dispatch';

export interface ToolContext {
  principal: Principal;
  dispatch: Dispatch;
  /** Sends a progress notification when the client asked for them. */
  progress(progress: number, total: number, message: string): Promise<void>;
  signal: AbortSignal;
  /** How often audit_repository looks at its audit. */
  pollMs: number;
}

/** A tool's answer: the REST result it ends with, or the problem that stopped it. */
export type ToolOutcome = DispatchResult;

export interface CompositeTool {
  name: string;
  scope: ScopeName;
  readOnly: boolean;
  definition: Tool;
  validate: Validator;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}

const ws = (p: Principal) => `/v1/workspaces/${p.workspaceId}`;
const ok = (r: DispatchResult) => r.status >= 200 && r.status < 300;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

function composite(
  spec: Omit<CompositeTool, 'validate' | 'definition'> & {
    title: string;
    description: string;
    input: TSchema;
    annotations: Tool['annotations'];
  },
): CompositeTool {
  return {
    name: spec.name,
    scope: spec.scope,
    readOnly: spec.readOnly,
    run: spec.run,
    validate: compileValidator(spec.input, 'body'),
    definition: {
      name: spec.name,
      title: spec.title,
      description: `${spec.description}\n\nScope: ${spec.scope}.`,
      inputSchema: JSON.parse(JSON.stringify(spec.input)) as Tool['inputSchema'],
      annotations: { title: spec.title, ...spec.annotations, openWorldHint: false },
    },
  };
}

const auditRepository = composite({
  name: 'audit_repository',
  scope: 'audits:write',
  readOnly: false,
  title: 'Audit a repository and wait for the result',
  description:
    'Starts an audit (createAudit, same body) and waits until it completes, fails or is cancelled, sending a progress notification as its stages finish. Answers the final AuditResponse.',
  input: AuditCreate,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const started = await ctx.dispatch(ctx.principal, {
      method: 'post',
      path: `${ws(ctx.principal)}/audits`,
      body: args,
    });
    if (!ok(started)) return started;
    const id = (started.body as { id: string }).id;
    let last = started;
    let reported = -1;
    for (;;) {
      const audit = last.body as {
        status: string;
        stages?: Array<{ status: string; key: string }>;
      };
      const stages = audit.stages ?? [];
      const done = stages.filter((s) => !['pending', 'running'].includes(s.status)).length;
      if (done !== reported) {
        reported = done;
        const running = stages.find((s) => s.status === 'running')?.key;
        await ctx.progress(
          done,
          Math.max(stages.length, 1),
          `audit ${id}: ${audit.status}${running ? ` (stage ${running})` : ''}`,
        );
      }
      if (TERMINAL.has(audit.status) || ctx.signal.aborted) return last;
      await new Promise((r) => setTimeout(r, ctx.pollMs));
      last = await ctx.dispatch(ctx.principal, {
        method: 'get',
        path: `${ws(ctx.principal)}/audits/${id}`,
      });
      if (!ok(last)) return last;
    }
  },
});

const RepositoryEntity = Type.Object(
  {
    repository_id: Type.String({ format: 'uuid' }),
    entity_key: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Canonical key or alias, e.g. service:cartservice.',
    }),
    max_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 3 })),
  },
  { additionalProperties: false },
);

const explainEntity = composite({
  name: 'explain_entity',
  scope: 'audits:read',
  readOnly: true,
  title: 'Explain an architecture entity',
  description:
    "An entity of a repository's latest completed snapshot with the evidence behind it (file, lines, source) and its dependency paths both ways (what it depends on, what depends on it).",
  input: RepositoryEntity,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run(args, ctx) {
    const base = `${ws(ctx.principal)}/repositories/${String(args.repository_id)}/architecture`;
    const truth = await ctx.dispatch(ctx.principal, { method: 'get', path: base });
    if (!ok(truth)) return truth;
    const body = truth.body as {
      audit_id: string;
      entities: Array<{ canonical_key: string; evidence_ids: string[]; aliases?: string[] }>;
      evidence: Array<{ id: string }>;
    };
    const key = String(args.entity_key);
    const entity = body.entities.find((e) => e.canonical_key === key || e.aliases?.includes(key));
    const paths: Record<string, unknown> = {};
    for (const direction of ['downstream', 'upstream']) {
      const reply = await ctx.dispatch(ctx.principal, {
        method: 'get',
        path: `${base}/dependencies`,
        query: { entity_key: key, direction, max_depth: String(args.max_depth ?? 3) },
      });
      if (!ok(reply)) return reply;
      paths[direction] = (reply.body as { paths: unknown }).paths;
    }
    const cited = new Set(entity?.evidence_ids ?? []);
    return {
      status: 200,
      type: 'application/json',
      body: {
        audit_id: body.audit_id,
        entity: entity ?? null,
        evidence: body.evidence.filter((e) => cited.has(e.id)),
        dependencies: paths,
      },
    };
  },
});

const gateStatus = composite({
  name: 'gate_status',
  scope: 'audits:read',
  readOnly: true,
  title: "An audit's change gate",
  description:
    'The change gate of an audit (pass, review, blocked or insufficient_evidence) with the changes and rules behind it, plus the audit status. Before the changes stage the gate is not there yet: the answer then says so with the audit status.',
  input: Type.Object(
    { audit_id: Type.String({ format: 'uuid' }) },
    { additionalProperties: false },
  ),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async run(args, ctx) {
    const path = `${ws(ctx.principal)}/audits/${String(args.audit_id)}`;
    const audit = await ctx.dispatch(ctx.principal, { method: 'get', path });
    if (!ok(audit)) return audit;
    const gate = await ctx.dispatch(ctx.principal, { method: 'get', path: `${path}/gate` });
    const status = (audit.body as { status: string }).status;
    if (!ok(gate) && gate.status !== 404) return gate;
    return {
      status: 200,
      type: 'application/json',
      body: { audit_id: args.audit_id, audit_status: status, gate: ok(gate) ? gate.body : null },
    };
  },
});

export const COMPOSITE_TOOLS: readonly CompositeTool[] = [
  auditRepository,
  explainEntity,
  gateStatus,
];

/** Resource templates: what `resources/read` accepts. */
export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'archaudit://repositories/{repository_id}/architecture',
    name: 'architecture',
    title: 'Architecture truth',
    description:
      "A repository's latest completed architecture snapshot (ArchitectureTruthResponse).",
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'archaudit://repositories/{repository_id}/diagram',
    name: 'diagram',
    title: 'Architecture diagram',
    description: "A repository's latest completed snapshot as a Mermaid flowchart.",
    mimeType: 'text/vnd.mermaid',
  },
  {
    uriTemplate: 'archaudit://decisions/{decision_id}/brief',
    name: 'decision-brief',
    title: 'Decision brief',
    description: 'The brief of an architecture decision (ArchitectureDecisionBriefResponse).',
    mimeType: 'application/json',
  },
];

const URI =
  /^archaudit:\/\/(repositories|decisions)\/([0-9a-fA-F-]{36})\/(architecture|diagram|brief)$/;

/** Reads a resource through the registry's operations; null when the URI names none. */
export async function readResource(
  uri: string,
  principal: Principal,
  dispatch: Dispatch,
): Promise<{ result: DispatchResult; mimeType: string } | null> {
  const m = URI.exec(uri);
  if (!m) return null;
  const [, family, id, what] = m as unknown as [string, string, string, string];
  const base = ws(principal);
  if (family === 'decisions' && what === 'brief') {
    const result = await dispatch(principal, {
      method: 'get',
      path: `${base}/decisions/${id}/brief`,
    });
    return { result, mimeType: 'application/json' };
  }
  if (family !== 'repositories' || what === 'brief') return null;
  const truth = await dispatch(principal, {
    method: 'get',
    path: `${base}/repositories/${id}/architecture`,
  });
  if (what === 'architecture' || !ok(truth)) return { result: truth, mimeType: 'application/json' };
  const auditId = (truth.body as { audit_id: string }).audit_id;
  const result = await dispatch(principal, {
    method: 'get',
    path: `${base}/audits/${auditId}/architecture/diagram`,
    query: { format: 'mermaid' },
  });
  return { result, mimeType: 'text/vnd.mermaid' };
}

/** Concrete resources to list: each repository's truth and diagram, each decision's brief. */
export async function listResources(principal: Principal, dispatch: Dispatch) {
  const out: Array<{ uri: string; name: string; title: string; mimeType: string }> = [];
  const base = ws(principal);
  const repos = await dispatch(principal, {
    method: 'get',
    path: `${base}/repositories`,
    query: { limit: '200' },
  });
  if (ok(repos)) {
    for (const r of (repos.body as { items: Array<{ id: string; name: string }> }).items) {
      out.push(
        {
          uri: `archaudit://repositories/${r.id}/architecture`,
          name: `${r.name}-architecture`,
          title: `${r.name}: architecture truth`,
          mimeType: 'application/json',
        },
        {
          uri: `archaudit://repositories/${r.id}/diagram`,
          name: `${r.name}-diagram`,
          title: `${r.name}: diagram (Mermaid)`,
          mimeType: 'text/vnd.mermaid',
        },
      );
    }
  }
  const decisions = await dispatch(principal, {
    method: 'get',
    path: `${base}/decisions`,
    query: { limit: '200' },
  });
  if (ok(decisions)) {
    for (const d of (decisions.body as { items: Array<{ id: string; title: string }> }).items) {
      out.push({
        uri: `archaudit://decisions/${d.id}/brief`,
        name: `decision-${d.id}`,
        title: `Decision brief: ${d.title}`,
        mimeType: 'application/json',
      });
    }
  }
  return out;
}
