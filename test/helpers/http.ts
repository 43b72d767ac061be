/** A tiny HTTP client over fetch for tests: JSON in, status, headers and parsed body out. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Raw body text (sent as-is). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | ArrayBuffer | undefined;
  if (options.raw !== undefined)
    body =
      typeof options.raw === 'string'
        ? options.raw
        : (new Uint8Array(options.raw).buffer as ArrayBuffer);
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Asserts nothing itself: returns whether a reply is a well-formed problem. */
export function isProblem(reply: Reply): boolean {
  const b = reply.body as Record<string, unknown> | undefined;
  return (
    (reply.headers.get('content-type') ?? '').startsWith('application/problem+json') &&
    !!b &&
    typeof b.code === 'string' &&
    typeof b.hint === 'string' &&
    typeof b.request_id === 'string' &&
    b.status === reply.status
  );
}
