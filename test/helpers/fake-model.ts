/**
 * A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests: answers
 * `POST /v1/chat/completions` with queued replies (else the default one), records every request
 * it received there, and 404s everything else.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeReply {
  /** HTTP status; 200 unless set. */
  status?: number;
  /** The completion text (200), or the error message (other statuses). */
  text?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Waits this long before answering (to provoke timeouts). */
  delayMs?: number;
  headers?: Record<string, string>;
  /** Raw override of the body: a string is sent as-is, anything else as JSON. */
  body?: unknown;
  /** Answer with these function calls (no text, finish_reason `tool_calls`) instead of text. */
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export interface FakeModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: Array<{ headers: Record<string, string | string[] | undefined>; body: any }>;
  enqueue(...replies: FakeReply[]): void;
  setDefault(reply: FakeReply): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0 };
const DEFAULT_REPLY: FakeReply = { status: 200, text: 'ok', usage: DEFAULT_USAGE };

const ERROR_TYPES: Record<number, [type: string, code: string]> = {
  400: ['invalid_request_error', 'invalid_request'],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'forbidden'],
  404: ['invalid_request_error', 'not_found'],
  429: ['requests', 'rate_limit_exceeded'],
  500: ['server_error', 'server_error'],
  503: ['server_error', 'service_unavailable'],
};

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const queue: FakeReply[] = [];
  let fallback: FakeReply = DEFAULT_REPLY;
  const requests: FakeModelServer['requests'] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let completionCount = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        sendJson(res, 404, errorBody(404, `no route for ${req.method} ${path}`), {});
        return;
      }
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
      requests.push({ headers: { ...req.headers }, body });
      const reply = queue.shift() ?? fallback;
      const status = reply.status ?? 200;
      let payload: unknown;
      if (reply.body !== undefined) payload = reply.body;
      else if (status >= 400) payload = errorBody(status, reply.text);
      else {
        completionCount += 1;
        const usage = reply.usage ?? DEFAULT_USAGE;
        payload = {
          id: `chatcmpl-fake-${completionCount}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: typeof body?.model === 'string' ? body.model : 'fake-model',
          choices: [
            {
              index: 0,
              message: reply.toolCalls
                ? {
                    role: 'assistant',
                    content: null,
                    tool_calls: reply.toolCalls.map((c, i) => ({
                      id: `call-${completionCount}-${i}`,
                      type: 'function',
                      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
                    })),
                  }
                : { role: 'assistant', content: reply.text ?? 'ok' },
              finish_reason: reply.toolCalls ? 'tool_calls' : 'stop',
            },
          ],
          usage: {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.prompt_tokens + usage.completion_tokens,
            prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
          },
        };
      }
      const answer = () => sendJson(res, status, payload, reply.headers ?? {});
      if (reply.delayMs && reply.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, reply.delayMs);
        timers.add(timer);
      } else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setDefault: (reply) => {
      fallback = reply;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function errorBody(status: number, message?: string) {
  const [type, code] = ERROR_TYPES[status] ?? [
    status >= 500 ? 'server_error' : 'invalid_request_error',
    `http_${status}`,
  ];
  return { error: { message: message ?? `fake error ${status}`, type, code } };
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string>,
) {
  if (res.destroyed || res.writableEnded) return;
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
