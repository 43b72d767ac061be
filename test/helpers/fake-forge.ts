/**
 * A fake GitHub and GitLab REST API: a real HTTP server on loopback speaking the paths, methods,
 * auth headers and answers of the calls we publish with (statuses, issue comments, merge request
 * notes, GitHub check runs: created, listed per commit, updated with annotations appended and at
 * most 50 a request, 422 beyond, as GitHub answers). It records every call, checks the token, keeps comments and notes so edits can be
 * seen, and can be taken down (503 to everything) to test retries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForgeCall {
  method: string;
  path: string;
  auth: string;
  body: any;
  status: number;
}

export interface FakeForge {
  /** `http://127.0.0.1:<port>` (GitHub's API root) */
  url: string;
  calls: ForgeCall[];
  /** Comments (GitHub) or notes (GitLab) by id. */
  comments: Map<number, { on: string; body: string }>;
  /** GitHub check runs by id, as they stand after every update. */
  checkRuns: Map<number, CheckRun>;
  /** While true, every call is answered 503 (and still recorded). */
  down: boolean;
  close(): Promise<void>;
}

export interface CheckRun {
  id: number;
  name: string;
  head_sha: string;
  external_id: string | null;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string } | null;
  details_url: string | null;
  annotations: any[];
}

/** GitHub's bound on annotations per check run request. */
const ANNOTATIONS_PER_REQUEST = 50;

export async function startFakeForge(tokens: {
  github: string;
  gitlab: string;
}): Promise<FakeForge> {
  let nextId = 1000;
  const forge: Omit<FakeForge, 'url' | 'close'> = {
    calls: [],
    comments: new Map(),
    checkRuns: new Map(),
    down: false,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname;
      const gitlab = path.startsWith('/api/v4/');
      const auth = gitlab
        ? String(req.headers['private-token'] ?? '')
        : String(req.headers.authorization ?? '');
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const reply = (status: number, payload: unknown): true => {
        forge.calls.push({ method: req.method ?? '', path: req.url ?? '', auth, body, status });
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(payload));
        return true;
      };
      if (forge.down) return reply(503, { message: 'Service Unavailable' });
      const expected = gitlab ? tokens.gitlab : `Bearer ${tokens.github}`;
      if (auth !== expected) return reply(401, { message: 'Bad credentials' });
      /** List (GET) or create (POST) the comments on one pull request; undefined otherwise. */
      const comments = (on: string) => {
        if (req.method === 'GET')
          return reply(
            200,
            [...forge.comments]
              .filter(([, c]) => c.on === on)
              .map(([id, c]) => ({ id, body: c.body })),
          );
        if (req.method !== 'POST') return undefined;
        const id = nextId++;
        forge.comments.set(id, { on, body: body.body });
        return reply(201, { id, body: body.body });
      };
      const edit = (id: number) => {
        const c = forge.comments.get(id);
        if (!c) return reply(404, { message: 'Not Found' });
        c.body = body.body;
        return reply(200, { id, body: c.body });
      };
      const m = (re: RegExp) => re.exec(path);
      let g: RegExpExecArray | null;
      /** A check run's fields from a create or update body; a problem message, or null. */
      const applyCheck = (run: CheckRun): string | null => {
        const annotations = body?.output?.annotations ?? [];
        if (annotations.length > ANNOTATIONS_PER_REQUEST)
          return `Only ${ANNOTATIONS_PER_REQUEST} annotations are allowed per request`;
        if (body?.output && (typeof body.output.title !== 'string' || !body.output.summary))
          return 'output needs a title and a summary';
        if (body?.status === 'completed' && !body.conclusion) return 'conclusion is required';
        for (const k of ['status', 'conclusion', 'details_url', 'external_id'] as const)
          if (body?.[k] !== undefined) (run as any)[k] = body[k];
        if (body?.output) run.output = { title: body.output.title, summary: body.output.summary };
        run.annotations.push(...annotations);
        return null;
      };
      if (req.method === 'POST' && m(/^\/repos\/[^/]+\/[^/]+\/check-runs$/)) {
        if (!body?.name || !/^[0-9a-f]{40}$/.test(body?.head_sha ?? ''))
          return reply(422, { message: 'name and head_sha are required' });
        const run: CheckRun = {
          id: nextId++,
          name: body.name,
          head_sha: body.head_sha,
          external_id: null,
          status: 'queued',
          conclusion: null,
          output: null,
          details_url: null,
          annotations: [],
        };
        const problem = applyCheck(run);
        if (problem) return reply(422, { message: problem });
        forge.checkRuns.set(run.id, run);
        return reply(201, run);
      }
      if (req.method === 'PATCH' && (g = m(/^\/repos\/[^/]+\/[^/]+\/check-runs\/(\d+)$/))) {
        const run = forge.checkRuns.get(Number(g[1]));
        if (!run) return reply(404, { message: 'Not Found' });
        const problem = applyCheck(run);
        if (problem) return reply(422, { message: problem });
        return reply(200, run);
      }
      if (
        req.method === 'GET' &&
        (g = m(/^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]{40})\/check-runs$/))
      ) {
        const name = url.searchParams.get('check_name');
        const runs = [...forge.checkRuns.values()].filter(
          (r) => r.head_sha === g![1] && (!name || r.name === name),
        );
        return reply(200, { total_count: runs.length, check_runs: runs });
      }
      if (req.method === 'POST' && (g = m(/^\/repos\/[^/]+\/[^/]+\/statuses\/([0-9a-f]{40})$/))) {
        if (!['error', 'failure', 'pending', 'success'].includes(body?.state))
          return reply(422, { message: 'state is not a status state' });
        return reply(201, { id: nextId++, state: body?.state, context: body?.context });
      }
      if ((g = m(/^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/))) {
        const listed = comments(`issue:${g[1]}`);
        if (listed) return listed;
      }
      if (req.method === 'PATCH' && (g = m(/^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/))) {
        return edit(Number(g[1]));
      }
      if (
        req.method === 'POST' &&
        (g = m(/^\/api\/v4\/projects\/([^/]+)\/statuses\/([0-9a-f]{40})$/))
      ) {
        if (!['pending', 'running', 'success', 'failed', 'canceled'].includes(body?.state))
          return reply(400, { message: 'state is invalid' });
        return reply(201, { id: nextId++, status: body?.state, name: body?.name });
      }
      if ((g = m(/^\/api\/v4\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes$/))) {
        const listed = comments(`mr:${decodeURIComponent(g[1]!)}!${g[2]}`);
        if (listed) return listed;
      }
      if (
        req.method === 'PUT' &&
        (g = m(/^\/api\/v4\/projects\/[^/]+\/merge_requests\/\d+\/notes\/(\d+)$/))
      ) {
        return edit(Number(g[1]));
      }
      return reply(404, { message: `no route ${req.method} ${path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(forge, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
