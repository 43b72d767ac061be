/**
 * Runs the API on a port with graceful shutdown: stop accepting, let in-flight requests finish
 * (up to shutdownTimeoutMs), then close lingering connections. Expects a migrated database.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ApiError, problemBody } from './errors';
import type { Logger } from '../platform/logger';
import { createApp } from './app';
import type { AppServices } from './services';
import { ensureCatalog } from '../db/controls';
import { answerProbe } from './probes';
import { answerCliDownload } from './cli-download';
import { countAuditsWith, watchPool } from '../platform/metrics';
import { countAuditsByStatus } from '../db/audits';

export interface RunningApi {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startApi(
  services: AppServices,
  port: number,
  host: string,
): Promise<RunningApi> {
  // Reference data the API serves: the built-in control catalog of this version (idempotent), so
  // that reads never write.
  await ensureCatalog(services.db);
  watchPool('api', services.db);
  countAuditsWith(() => countAuditsByStatus(services.db));
  const app = createApp(services);
  const handle = app.callback();
  let closing: Promise<void> | undefined;
  const server = http.createServer((req, res) => {
    if (answerProbe(req, res, services, () => closing !== undefined)) return;
    if (!answerCliDownload(req, res)) void handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(err, socket, services.log),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => server.closeAllConnections(),
          services.config.shutdownTimeoutMs,
        );
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/** Requests Node's HTTP parser refuses, by parser error code: status, code and what went wrong. */
const PARSER_REFUSALS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'headers_too_large',
    'The request line and headers exceed 16 KB (a URL that long is one cause).',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request did not arrive in time.'],
};

/**
 * Answers a request Node's HTTP parser refused (malformed request line or header, conflicting
 * Content-Length and Transfer-Encoding, bad chunk size, headers over 16 KB) with problem+json
 * instead of Node's bare status line, when the socket can still take a response. A client fault:
 * logged at info, a connection reset at debug.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, log: Logger): void {
  // Node's own default handler makes the same check: a response already under way cannot be
  // replaced by another.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    log.debug({ code: err.code }, 'connection closed by the client');
    socket.destroy();
    return;
  }
  const [status, code, detail] = PARSER_REFUSALS[err.code ?? ''] ?? [
    400,
    'malformed_request',
    `The request is not well-formed HTTP/1.1 (${err.code ?? 'parse error'}).`,
  ];
  const requestId = crypto.randomUUID();
  log.info({ code: err.code, status, request_id: requestId }, 'request refused by the HTTP parser');
  const problem = new ApiError({
    status,
    code,
    title: http.STATUS_CODES[status] ?? 'Bad request',
    detail,
    hint: 'Send a well-formed request: one Content-Length or chunked Transfer-Encoding, valid headers, a URL under 16 KB.',
  });
  const body = JSON.stringify(problemBody(problem, requestId));
  socket.end(
    [
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-ID: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
