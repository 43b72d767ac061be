/**
 * Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, spans go as OTLP/HTTP JSON to the collector (a
 * real HTTP server on loopback here), and one trace runs from the API request (carrying its
 * request id and operation id) through the workflow start into the workflow and its activities.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startAuditHarness, waitForAudit, type AuditHarness } from './helpers/audit-harness';
import { createTenant, type Tenant } from './helpers/factories';
import { createRepo, SAMPLE_FILES, type TestRepo } from './helpers/git';
import { call } from './helpers/http';
import { startTracing, type Tracing } from '../platform/tracing';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number } }>;
}

/** A collector: every span posted to /v1/traces, and the content types the posts came with. */
class Collector {
  readonly spans: Span[] = [];
  readonly contentTypes = new Set<string>();
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') {
          this.contentTypes.add(req.headers['content-type'] ?? '');
          const doc = JSON.parse(body) as {
            resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }>;
          };
          for (const rs of doc.resourceSpans)
            for (const ss of rs.scopeSpans) this.spans.push(...ss.spans);
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

function attribute(span: Span, key: string): string | number | undefined {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.intValue;
}

const collector = new Collector();
let tracing: Tracing;
let h: AuditHarness;
let tenant: Tenant;
let repo: TestRepo;

test.before(async () => {
  await collector.start();
  // As api/main.ts and worker/main.ts do, before the API and the worker are made.
  tracing = startTracing(collector.url, 'archaudit-test')!;
  h = await startAuditHarness({ config: { otlpEndpoint: collector.url } });
  tenant = await createTenant(h.app.services.db);
  repo = createRepo(SAMPLE_FILES);
});

test.after.always(async () => {
  await h?.close();
  await tracing?.shutdown();
  await collector.stop();
  repo?.remove();
});

test('one trace spans the API request, the workflow start, the workflow and its activities', async (t) => {
  const ws = `/v1/workspaces/${tenant.workspaceId}`;
  const created = await call(h.app.url, 'POST', `${ws}/repositories`, {
    token: tenant.token,
    body: { name: 'shop', url: `file://${repo.dir}` },
  });
  const requestId = `trace-${Date.now()}`;
  const audit = await call(h.app.url, 'POST', `${ws}/audits`, {
    token: tenant.token,
    body: { repository_id: created.body.id },
    headers: { 'X-Request-ID': requestId },
  });
  t.is(audit.status, 202, audit.text);
  const done = await waitForAudit(h.app.url, tenant.token, tenant.workspaceId, audit.body.id);
  t.is(done.body.status, 'completed');

  // Workflow spans leave the worker through a sink after their workflow task: flush until the
  // workflow's span has arrived (or give up after a while).
  const request = () =>
    collector.spans.find((s) => attribute(s, 'archaudit.request_id') === requestId);
  const inTrace = () => collector.spans.filter((s) => s.traceId === request()?.traceId);
  for (let i = 0; i < 50; i++) {
    await tracing.flush();
    if (inTrace().some((s) => s.name === 'RunWorkflow:AuditWorkflow')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const server = request();
  t.truthy(server, 'the API request has a span');
  t.is(server!.name, 'POST createAudit');
  t.is(attribute(server!, 'archaudit.operation_id'), 'createAudit');
  t.is(attribute(server!, 'http.response.status_code'), 202);
  t.falsy(server!.parentSpanId, 'the request span is the root');

  const spans = inTrace();
  const names = new Set(spans.map((s) => s.name));
  t.true(names.has('StartWorkflow:AuditWorkflow'), [...names].join(', '));
  t.true(names.has('RunWorkflow:AuditWorkflow'), [...names].join(', '));
  t.true(names.has('RunActivity:acquireSource'), [...names].join(', '));
  t.true(names.has('RunActivity:runAgent'), [...names].join(', '));
  // The start is the request's child.
  const start = spans.find((s) => s.name === 'StartWorkflow:AuditWorkflow')!;
  t.is(start.parentSpanId, server!.spanId);
  t.deepEqual([...collector.contentTypes], ['application/json']);
});
