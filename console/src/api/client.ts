/**
 * The console's only way to the API: openapi-fetch typed by the contract the registry produces
 * (cli/generated/api.d.ts, `npm run cli:generate`), so the console cannot drift from /v1. The
 * session cookie goes with every call (same origin); every unsafe method carries the session's
 * CSRF token (getCurrentCaller) as X-CSRF-Token.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../../cli/generated/api';

export type Schemas = components['schemas'];

let csrfToken: string | null = null;

/** Remembers the session's CSRF token (from GET /v1/caller). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method) && csrfToken)
      request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

export const api = createClient<paths>({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
});
api.use(csrf);

/** A problem+json answer, thrown so TanStack Query treats it as an error. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly hint: string | undefined,
    /** Each validation problem with the JSON Pointer of the value it names. */
    readonly errors: Schemas['FieldError'][] = [],
  ) {
    super(detail);
  }
}

/** The data of an openapi-fetch result, or its problem thrown. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    const p = (result.error ?? {}) as Partial<Schemas['ProblemDetails']>;
    throw new ProblemError(
      result.response.status,
      p.code ?? 'unknown',
      p.detail ?? `The API answered ${result.response.status}.`,
      p.hint,
      Array.isArray(p.errors) ? p.errors : [],
    );
  }
  return result.data;
}
