/**
 * Liveness and readiness, outside `/v1` and the contract (orchestrators and load balancers ask,
 * not clients): `GET /livez` answers 200 while the process serves HTTP; `GET /readyz` answers 200
 * when the database and Temporal both answer, else 503 naming which does not (and 503 once a
 * shutdown began, so a balancer stops sending before the listener closes). Neither needs a token
 * nor counts against a rate limit. `/v1/health` stays as the contract defines it.
 */
import type http from 'node:http';
import { pingDatabase } from '../db/connection';
import type { AppServices } from './services';

type Check = 'ok' | 'down';

/** Answers `req` when it is a probe; false leaves it to the application. */
export function answerProbe(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  services: AppServices,
  closing: () => boolean,
): boolean {
  const url = req.url ?? '';
  if (url !== '/livez' && url !== '/readyz') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, { status: 'method_not_allowed' }, { Allow: 'GET, HEAD' });
    return true;
  }
  if (url === '/livez') {
    send(res, 200, { status: 'ok' });
    return true;
  }
  void readiness(services).then((checks) => {
    const ready = !closing() && checks.db === 'ok' && checks.temporal === 'ok';
    const status = closing() ? 'shutting_down' : ready ? 'ready' : 'not_ready';
    send(res, ready ? 200 : 503, { status, ...checks }, ready ? {} : { 'Retry-After': '5' });
  });
  return true;
}

async function readiness(services: AppServices): Promise<{ db: Check; temporal: Check }> {
  const [db, temporal] = await Promise.all([
    withTimeout(pingDatabase(services.db), 2000).then(
      () => 'ok' as const,
      () => 'down' as const,
    ),
    services.temporal.healthy().then((up) => (up ? ('ok' as const) : ('down' as const))),
  ]);
  return { db, temporal };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref()),
  ]);
}

function send(
  res: http.ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}
