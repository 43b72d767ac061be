/**
 * The few error classes the API throws. Each carries an HTTP status and a stable code; the front door
 * (frontDoor in api/middleware.ts) turns them into application/problem+json.
 */

export interface FieldError {
  /** Where the problem is: `body`, `query`, `path` or `header`. */
  in: 'body' | 'query' | 'path' | 'header';
  /** JSON Pointer to the offending value inside that location (`/scopes/3`). */
  path: string;
  message: string;
}

export interface ProblemInit {
  status: number;
  code: string;
  title: string;
  detail: string;
  hint: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra members added to the problem body (RFC 9457 extensions). */
  extensions?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly hint: string;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(init: ProblemInit) {
    super(init.detail);
    this.name = 'ApiError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.hint = init.hint;
    this.errors = init.errors;
    this.headers = init.headers ?? {};
    this.extensions = init.extensions ?? {};
  }
}

function describe(errors: FieldError[]): string {
  return errors.map((e) => `${e.in}${e.path || ''}: ${e.message}`).join('; ');
}

/** The Retry-After of a 503: a routine restart of PostgreSQL or Temporal takes seconds. */
const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

export const problems = {
  validationFailed(errors: FieldError[]): ApiError {
    const unknown = errors.filter((e) => e.message === 'is not a known property');
    if (unknown.length > 0 && unknown.length === errors.length) {
      return new ApiError({
        status: 400,
        code: 'unknown_property',
        title: 'Unknown property',
        detail: `Unknown property: ${describe(unknown)}`,
        hint: 'Remove the named properties; the contract (GET /v1/openapi.json) lists the accepted ones.',
        errors,
      });
    }
    return new ApiError({
      status: 400,
      code: 'validation_failed',
      title: 'Validation failed',
      detail: describe(errors),
      hint: 'Correct the fields listed in `errors` and send the request again.',
      errors,
    });
  },
  malformedJson(reason: string): ApiError {
    return new ApiError({
      status: 400,
      code: 'malformed_json',
      title: 'Malformed JSON',
      detail: `The request body is not valid JSON: ${reason}`,
      hint: 'Send a well-formed JSON document with Content-Type: application/json.',
    });
  },
  missingToken(): ApiError {
    return new ApiError({
      status: 401,
      code: 'authentication_required',
      title: 'Authentication required',
      detail: 'This operation needs an API token and the request carried none.',
      hint: 'Send `Authorization: Bearer <API_TOKEN>`; an operator can create one with `npm run admin`.',
      headers: { 'WWW-Authenticate': 'Bearer realm="archaudit"' },
    });
  },
  invalidToken(detail: string): ApiError {
    return new ApiError({
      status: 401,
      code: 'invalid_token',
      title: 'Invalid token',
      detail,
      hint: 'Use a current, unrevoked token of the form `aat_<prefix>_<secret>`, or ask for a new one.',
      headers: { 'WWW-Authenticate': 'Bearer realm="archaudit", error="invalid_token"' },
    });
  },
  insufficientScope(scopes: string[], detail?: string): ApiError {
    return new ApiError({
      status: 403,
      code: 'insufficient_scope',
      title: 'Insufficient scope',
      detail: detail ?? `This operation requires the scope ${scopes.join(', ')}.`,
      hint: `Use a token that holds ${scopes.join(', ')}.`,
      headers: {
        'WWW-Authenticate': `Bearer realm="archaudit", error="insufficient_scope", scope="${scopes.join(' ')}"`,
      },
      extensions: { required_scopes: scopes },
    });
  },
  forbidden(code: string, detail: string, hint: string): ApiError {
    return new ApiError({ status: 403, code, title: 'Forbidden', detail, hint });
  },
  notFound(what: string): ApiError {
    return new ApiError({
      status: 404,
      code: 'not_found',
      title: 'Not found',
      detail: `${what} was not found.`,
      hint: 'Check the identifier and the workspace it belongs to.',
    });
  },
  routeNotFound(method: string, path: string): ApiError {
    return new ApiError({
      status: 404,
      code: 'not_found',
      title: 'Not found',
      detail: `No operation matches ${method} ${path}.`,
      hint: 'The contract at GET /v1/openapi.json lists every operation.',
    });
  },
  methodNotAllowed(method: string, allowed: string[]): ApiError {
    return new ApiError({
      status: 405,
      code: 'method_not_allowed',
      title: 'Method not allowed',
      detail: `${method} is not allowed here; allowed: ${allowed.join(', ')}.`,
      hint: 'Use one of the methods in the Allow header.',
      headers: { Allow: allowed.join(', ') },
    });
  },
  conflict(
    code: string,
    detail: string,
    hint: string,
    extensions?: Record<string, unknown>,
  ): ApiError {
    return new ApiError({ status: 409, code, title: 'Conflict', detail, hint, extensions });
  },
  /** 409 invalid_transition: a lifecycle move the current state does not allow. */
  invalidTransition(
    what: string,
    current: string,
    to: string,
    allowed: readonly string[],
  ): ApiError {
    return new ApiError({
      status: 409,
      code: 'invalid_transition',
      title: 'Conflict',
      detail: `A ${what} in ${current} cannot move to ${to}; allowed moves from ${current}: ${allowed.length ? allowed.join(', ') : 'none'}.`,
      hint: allowed.length
        ? `Request one of: ${allowed.join(', ')}.`
        : `${current} accepts no requested move.`,
      extensions: { current_status: current, allowed_statuses: [...allowed] },
    });
  },
  /** 422: the request is well formed but names things that cannot go together. */
  unprocessable(
    code: string,
    detail: string,
    hint: string,
    extensions?: Record<string, unknown>,
  ): ApiError {
    return new ApiError({
      status: 422,
      code,
      title: 'Unprocessable request',
      detail,
      hint,
      extensions,
    });
  },
  idempotencyInProgress(key: string): ApiError {
    return new ApiError({
      status: 409,
      code: 'idempotency_in_progress',
      title: 'Request in progress',
      detail: `A request with Idempotency-Key ${JSON.stringify(key)} is still being processed.`,
      hint: 'Retry after Retry-After seconds with the same key and body to get its result.',
      headers: { 'Retry-After': '1' },
    });
  },
  idempotencyKeyReused(key: string): ApiError {
    return new ApiError({
      status: 422,
      code: 'idempotency_key_reused',
      title: 'Idempotency-Key reused',
      detail: `Idempotency-Key ${JSON.stringify(key)} was used with a different request.`,
      hint: 'Use a new Idempotency-Key for a different request.',
    });
  },
  payloadTooLarge(limit: number): ApiError {
    return new ApiError({
      status: 413,
      code: 'payload_too_large',
      title: 'Payload too large',
      detail: `The request body exceeds the limit of ${limit} bytes.`,
      hint: 'Send a smaller body.',
    });
  },
  unsupportedMediaType(got: string | undefined, accepted: string[]): ApiError {
    return new ApiError({
      status: 415,
      code: 'unsupported_media_type',
      title: 'Unsupported media type',
      detail: `Content-Type ${got ? JSON.stringify(got) : '(none)'} is not accepted; use ${accepted.join(' or ')}.`,
      hint: `Send the body with Content-Type: ${accepted[0]}.`,
    });
  },
  rateLimited(retryAfterSeconds: number): ApiError {
    return new ApiError({
      status: 429,
      code: 'rate_limited',
      title: 'Too many requests',
      detail: `The request quota is spent; it resets in ${retryAfterSeconds} s.`,
      hint: 'Wait for Retry-After seconds; the RateLimit header shows the remaining quota.',
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  },
  /** A dependency the request needs is down: 503 with Retry-After, naming which one. */
  unavailable(
    dependency: 'database' | 'workflow_engine',
    detail: string,
    extensions?: Record<string, unknown>,
  ): ApiError {
    return new ApiError({
      status: 503,
      code: `${dependency}_unavailable`,
      title: 'Service unavailable',
      detail,
      hint:
        dependency === 'database'
          ? 'Retry after Retry-After seconds; an operator should check PostgreSQL.'
          : 'Retry after Retry-After seconds; an operator should check Temporal.',
      headers: { 'Retry-After': String(RETRY_AFTER_UNAVAILABLE_SECONDS) },
      extensions,
    });
  },
  badRequest(detail: string, hint = 'Check the request against the contract.'): ApiError {
    return new ApiError({ status: 400, code: 'bad_request', title: 'Bad request', detail, hint });
  },
  internal(): ApiError {
    return new ApiError({
      status: 500,
      code: 'internal',
      title: 'Internal server error',
      detail: 'The server failed to handle this request.',
      hint: 'Retry later; report the request_id to an operator if it persists.',
    });
  },
};

/**
 * The application/problem+json body of a problem. Extension members come first so that none can
 * replace a standard member (a `status` extension once overwrote the HTTP status).
 */
export function problemBody(problem: ApiError, requestId: string): Record<string, unknown> {
  return {
    ...problem.extensions,
    type: `/v1/problems/${problem.code}`,
    title: problem.title,
    status: problem.status,
    detail: problem.message,
    code: problem.code,
    hint: problem.hint,
    request_id: requestId,
    ...(problem.errors ? { errors: problem.errors } : {}),
  };
}
