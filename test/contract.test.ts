/**
 * The contract: the generated OpenAPI 3.1 document is valid, and the registry, the router and
 * the document list the same operations, each held to the contract's rules.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import test from 'ava';
import { OPERATIONS } from '../api/operations';
import { buildRoutes, koaPath } from '../api/registry/router';
import { problemStatuses } from '../api/registry/operation';
import { NAME_KEYWORD } from '../api/schema-kit';
import { startTestApp, type TestApp } from './helpers/app';
import { call } from './helpers/http';
import { CONTRACT_SCHEMAS } from '../api/schemas';
import { SCOPES } from '../domain/contract/values';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, any> };
};

let app: TestApp;
let doc: Doc;

test.before(async () => {
  app = await startTestApp();
  const reply = await call<Doc>(app.url, 'GET', '/v1/openapi.json');
  doc = reply.body;
});
test.after.always(async () => {
  await app?.close();
});

const ISSUE_2_OPERATIONS = [
  'getContract',
  'listScopes',
  'getHealth',
  'getCurrentToken',
  'listWorkspaces',
  'getWorkspace',
  'listMembers',
  'listApiTokens',
  'createApiToken',
  'getApiToken',
  'revokeApiToken',
  'listRepositories',
  'createRepository',
  'getRepository',
  'updateRepository',
  'deleteRepository',
  'listActivity',
  'listAuditEvents',
];

test('the served document is valid OpenAPI 3.1 (seriousme validator)', async (t) => {
  // An ES module: loaded with import() from this CommonJS test.
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  t.is(doc.openapi, '3.1.0');
  const validator = new Validator();
  const result = await validator.validate(doc as never);
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
  // The validator does reject a broken document (so the check above can fail).
  const broken = JSON.parse(JSON.stringify(doc)) as Record<string, any>;
  broken.paths['/v1/scopes'].get.responses = 'none';
  t.false((await new Validator().validate(broken as never)).valid);
});

test('npm run --silent openapi prints the same document as GET /v1/openapi.json', (t) => {
  const root = path.resolve(__dirname, '..');
  // The document is over 1 MiB, spawnSync's default output buffer (beyond it the child is killed).
  const out = spawnSync('npm', ['run', '--silent', 'openapi'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  t.is(out.status, 0, out.stderr);
  t.deepEqual(JSON.parse(out.stdout), doc);
});

test('every operation is dispatched to its own handler through the routing buckets', async (t) => {
  // Without a token, an operation that needs one answers 401 from its handler (not 404 or 405
  // from the router); a public one answers its success status, or 415 from its handler when it
  // takes a raw body (a webhook) and none was sent.
  for (const op of OPERATIONS) {
    const concrete = op.path.replace(/\{[a-z_]+\}/g, '00000000-0000-4000-8000-000000000000');
    const reply = await call(app.url, op.method.toUpperCase(), concrete);
    if (op.access.kind === 'public')
      t.is(reply.status, op.rawBody ? 415 : op.success.status, op.operationId);
    else
      t.is(
        reply.body.code,
        'authentication_required',
        `${op.operationId}: ${JSON.stringify(reply.body)}`,
      );
  }
});

test('registry, router and document list the same operations', (t) => {
  const fromRegistry = OPERATIONS.map(
    (op) => `${op.method.toUpperCase()} ${op.path} ${op.operationId}`,
  ).sort();
  const { router } = buildRoutes(OPERATIONS, app.services);
  const fromRouter = router.stack
    .flatMap((layer) =>
      layer.methods
        .filter((m) => m !== 'HEAD')
        .map((m) => `${m} ${layer.path} ${String(layer.name)}`),
    )
    .sort();
  t.deepEqual(
    fromRouter,
    OPERATIONS.map(
      (op) => `${op.method.toUpperCase()} ${koaPath(op.path)} ${op.operationId}`,
    ).sort(),
  );
  const fromDoc = Object.entries(doc.paths)
    .flatMap(([p, item]) =>
      Object.entries(item).map(([m, op]) => `${m.toUpperCase()} ${p} ${op.operationId as string}`),
    )
    .sort();
  t.deepEqual(fromDoc, fromRegistry);
  const ids = OPERATIONS.map((op) => op.operationId);
  t.is(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const id of ISSUE_2_OPERATIONS) t.true(ids.includes(id), `${id} is in the contract`);
});

test('every operation documents its scope, problem responses and headers', (t) => {
  for (const op of OPERATIONS) {
    const entry = doc.paths[op.path]![op.method]!;
    t.regex(op.operationId, /^[a-z][A-Za-z]+$/, 'lowerCamelCase operationId');
    t.true('x-required-scope' in entry, `${op.operationId} names its scope`);
    if (op.access.kind === 'scope') {
      t.is(entry['x-required-scope'], op.access.scope);
      t.deepEqual(entry.security, [{ bearerAuth: [op.access.scope] }]);
      t.regex(entry.description, new RegExp(op.access.scope));
    }
    const expected = op.access.kind === 'public' ? [400, 429] : [400, 401, 403, 404, 429];
    if (op.body) expected.push(413, 415);
    for (const status of expected) {
      const response = entry.responses[String(status)];
      t.truthy(response, `${op.operationId} documents ${status}`);
      t.deepEqual(response.content['application/problem+json'].schema, {
        $ref: '#/components/schemas/ProblemDetails',
      });
    }
    t.deepEqual(
      Object.keys(entry.responses)
        .filter((s) => s.startsWith('4') || s.startsWith('5'))
        .map(Number)
        .sort(),
      problemStatuses(op),
    );
    t.truthy(
      entry.responses['429'].headers['Retry-After'],
      `${op.operationId} documents Retry-After on 429`,
    );
    for (const [status, response] of Object.entries<any>(entry.responses)) {
      for (const h of ['X-Request-ID', 'RateLimit-Policy', 'RateLimit']) {
        t.truthy(response.headers?.[h], `${op.operationId} ${status} documents ${h}`);
      }
    }
    t.true(entry.parameters.some((p: any) => p.name === 'X-Request-ID' && p.in === 'header'));
  }
});

test('every spec schema is a component, and objects reject unknown properties unless the spec says otherwise', (t) => {
  const open = new Set([
    'AssessmentResponse',
    'AttachmentCreate',
    'AttachmentResponse',
    'ProblemDetails',
  ]);
  for (const schema of CONTRACT_SCHEMAS) {
    const name = (schema as Record<string, unknown>)[NAME_KEYWORD] as string;
    t.truthy(doc.components.schemas[name], `${name} is a component`);
  }
  const walk = (name: string, node: any, where: string): void => {
    if (!node || typeof node !== 'object') return;
    if (
      node.type === 'object' &&
      node.properties &&
      Object.keys(node.properties).length > 0 &&
      !open.has(name)
    ) {
      t.is(node.additionalProperties, false, `${name}${where} rejects unknown properties`);
    }
    if (node.type === 'object' && node.properties) {
      for (const key of node.required ?? [])
        t.true(key in node.properties, `${name}${where}: required ${key} is declared`);
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'properties') walk(name, v, where);
    for (const [k, v] of Object.entries(node.properties ?? {})) walk(name, v, `${where}.${k}`);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) walk(name, schema, '');
  t.false(JSON.stringify(doc).includes(NAME_KEYWORD), 'internal keyword does not leak');
});

test('spec bounds appear in the document as stated', (t) => {
  const s = doc.components.schemas;
  t.like(s.ApiTokenCreate.properties.name, { minLength: 1, maxLength: 255 });
  t.like(s.ApiTokenCreate.properties.scopes, { minItems: 1, maxItems: 25 });
  t.deepEqual(s.ApiTokenCreate.required.sort(), ['expires_at', 'name', 'scopes']);
  t.like(s.ArchitectureDecisionProposal.properties.title, { minLength: 3, maxLength: 500 });
  t.like(s.ArchitectureDecisionProposal.properties.options, { minItems: 2, maxItems: 20 });
  t.like(s.AuditScheduleCreate.properties.local_hour, { minimum: 0, maximum: 23 });
  t.like(s.AuditSchedulePreviewRequest.properties.count, { minimum: 1, maximum: 20, default: 5 });
  t.is(s.AuditCreate.properties.commit_sha.anyOf[0].pattern, '^[0-9a-fA-F]{40}$');
  t.like(s.AttachmentCreate.properties.retention_days, { minimum: 1, maximum: 365, default: 90 });
  t.is(s.ApiTokenResponse.properties.token, undefined, 'ApiTokenResponse carries no token');
});

test('every one of the 25 scopes authorizes at least one operation', (t) => {
  t.is(SCOPES.length, 25);
  const required = new Set(
    OPERATIONS.flatMap((op) => (op.access.kind === 'scope' ? [op.access.scope] : [])),
  );
  t.deepEqual(
    SCOPES.filter((s) => !required.has(s)),
    [],
    'a scope that authorizes nothing is a promise the API does not keep',
  );
  for (const scope of [
    'reports:read',
    'reports:approve',
    'exports:write',
    'evidence:write',
    'ingestion:read',
  ])
    t.true(required.has(scope as (typeof SCOPES)[number]), scope);
});
