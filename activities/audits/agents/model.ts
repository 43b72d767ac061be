/**
 * The model provider behind "model-backed agents": one chat completion against an
 * OpenAI-compatible `POST {baseUrl}/chat/completions` endpoint, with failures mapped onto a small
 * set of `ModelError` codes that say whether a retry can help.
 *
 * Request body: `{ model, messages, max_tokens, reasoning_effort? }`. The output cap is sent under
 * ONE name, `max_tokens` by default, because it is the name that OpenAI-compatible servers (vLLM,
 * Ollama, llama.cpp, LiteLLM, hosted vendors...) most widely accept. OpenAI's own reasoning
 * models (o-series, gpt-5) reject `max_tokens` with a 400 and want `max_completion_tokens`: set
 * `maxTokensParam: 'max_completion_tokens'` (env `MODEL_MAX_TOKENS_PARAM`) for those. Sending both
 * is not an option: OpenAI refuses a request that carries `max_tokens` for those models.
 *
 * The API key only ever goes into the Authorization header. It is never logged, and it is scrubbed
 * out of any server text quoted in an error.
 */
import type { ModelUsage } from '../../../domain/audits/pricing';
import type { ModelSettings } from '../../../platform/config';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Null only on an assistant message that carries tool calls. */
  content: string | null;
  /** An assistant message's tool calls, sent back to the server as it gave them. */
  toolCalls?: ToolCall[];
  /** A `tool` message: the call it answers. */
  toolCallId?: string;
}

/** One function call the model asked for; `arguments` is the JSON text the server sent. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A function the model may call (OpenAI `tools` entry of type `function`). */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface CompletionRequest {
  messages: ChatMessage[];
  maxOutputTokens: number;
  reasoningEffort?: 'low' | 'medium' | 'high' | null;
  /** Bound on the whole exchange: connecting, waiting and reading the body. */
  timeoutMs: number;
  /** The caller's cancellation; an abort ends the request as `model_timeout`. */
  signal?: AbortSignal;
  /** Functions the model may call; its answer may then be tool calls instead of text. */
  tools?: readonly ToolDefinition[];
}

export interface CompletionResult {
  text: string;
  usage: ModelUsage;
  /** The model as the server reports it, else the configured one. */
  modelId: string;
  finishReason: string | null;
  /** The calls the model asked for; absent when it answered with text. */
  toolCalls?: ToolCall[];
}

export interface ModelProvider {
  readonly modelId: string;
  readonly baseUrl: string;
  complete(req: CompletionRequest): Promise<CompletionResult>;
}

export type ModelErrorCode =
  | 'model_timeout'
  | 'model_rate_limited'
  | 'model_unavailable'
  | 'model_request_rejected'
  | 'model_bad_response'
  | 'model_unreachable';

export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

export interface OpenAiCompatibleProviderOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is ignored. */
  baseUrl: string;
  apiKey: string | null;
  modelId: string;
  fetchImpl?: typeof fetch;
  /** The request field carrying `maxOutputTokens`; `max_tokens` unless set (see the file header). */
  maxTokensParam?: MaxTokensParam;
}

/** Longest piece of server text quoted in an error message. */
const MAX_QUOTED_CHARS = 500;

export class OpenAiCompatibleProvider implements ModelProvider {
  readonly modelId: string;
  readonly baseUrl: string;
  readonly maxTokensParam: MaxTokensParam;
  readonly #apiKey: string | null;
  readonly #fetch: typeof fetch;

  constructor(opts: OpenAiCompatibleProviderOptions) {
    const baseUrl = opts.baseUrl.trim().replace(/\/+$/, '');
    let parsed: URL;
    try {
      parsed = new URL(baseUrl);
    } catch {
      throw new TypeError(`model base URL is not a valid URL: ${JSON.stringify(baseUrl)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new TypeError(`model base URL must be http(s): ${JSON.stringify(baseUrl)}`);
    }
    if (!opts.modelId.trim()) throw new TypeError('model id must not be empty');
    this.baseUrl = baseUrl;
    this.modelId = opts.modelId.trim();
    this.#apiKey = opts.apiKey ? opts.apiKey : null;
    this.#fetch = opts.fetchImpl ?? fetch;
    this.maxTokensParam = opts.maxTokensParam ?? 'max_tokens';
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    if (!Number.isSafeInteger(req.timeoutMs) || req.timeoutMs <= 0) {
      throw new RangeError(`timeoutMs must be a positive integer, got ${req.timeoutMs}`);
    }
    if (!Number.isSafeInteger(req.maxOutputTokens) || req.maxOutputTokens <= 0) {
      throw new RangeError(
        `maxOutputTokens must be a positive integer, got ${req.maxOutputTokens}`,
      );
    }

    const body: Record<string, unknown> = {
      model: this.modelId,
      messages: req.messages.map(wireMessage),
      [this.maxTokensParam]: req.maxOutputTokens,
    };
    if (req.tools?.length)
      body.tools = req.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    if (req.reasoningEffort) body.reasoning_effort = req.reasoningEffort;

    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;

    const timeout = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([timeout, req.signal]) : timeout;

    let status: number;
    let responseHeaders: Headers;
    let text: string;
    try {
      const res = await this.#fetch(`${this.baseUrl}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal,
        // A redirect means a wrong base URL; following it would turn the POST into a GET.
        redirect: 'manual',
      });
      status = res.status;
      responseHeaders = res.headers;
      // The signal also bounds reading the body.
      text = await res.text();
    } catch (err) {
      throw this.#transportError(err, req, timeout);
    }

    if (status < 200 || status >= 300) throw this.#statusError(status, responseHeaders, text);
    return this.#parseSuccess(text);
  }

  /** A fetch that threw: an abort (timeout or the caller's), or a network failure. */
  #transportError(err: unknown, req: CompletionRequest, timeout: AbortSignal): ModelError {
    if (timeout.aborted) {
      return new ModelError(
        'model_timeout',
        `model request timed out after ${req.timeoutMs} ms`,
        true,
      );
    }
    if (req.signal?.aborted || isAbortError(err)) {
      return new ModelError('model_timeout', 'model request was aborted', true);
    }
    const code = causeCode(err);
    const detail = code ?? (err instanceof Error ? err.message : String(err));
    return new ModelError(
      'model_unreachable',
      `model server at ${this.#origin()} is unreachable (${truncate(this.#scrub(detail), MAX_QUOTED_CHARS)})`,
      true,
    );
  }

  #statusError(status: number, headers: Headers, text: string): ModelError {
    const quoted = this.#serverMessage(text);
    const suffix = quoted ? `: ${quoted}` : '';
    if (status === 429) {
      return new ModelError(
        'model_rate_limited',
        `model server rate-limited the request (HTTP 429)${suffix}`,
        true,
        status,
        parseRetryAfter(headers),
      );
    }
    if (status >= 500) {
      return new ModelError(
        'model_unavailable',
        `model server failed (HTTP ${status})${suffix}`,
        true,
        status,
        parseRetryAfter(headers),
      );
    }
    if (status === 408) {
      return new ModelError(
        'model_timeout',
        `model server timed out (HTTP 408)${suffix}`,
        true,
        status,
      );
    }
    if (status >= 300 && status < 400) {
      const location = headers.get('location');
      return new ModelError(
        'model_request_rejected',
        `model server redirected the request (HTTP ${status}${
          location ? ` to ${truncate(this.#scrub(location), 200)}` : ''
        }); check the model base URL`,
        false,
        status,
      );
    }
    return new ModelError(
      'model_request_rejected',
      `model server rejected the request (HTTP ${status})${suffix}`,
      false,
      status,
    );
  }

  #parseSuccess(text: string): CompletionResult {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw badResponse('the body is not JSON');
    }
    if (!isRecord(json)) throw badResponse('the body is not a JSON object');
    const choice = Array.isArray(json.choices) ? (json.choices[0] as unknown) : undefined;
    if (!isRecord(choice)) throw badResponse('choices[0] is missing');
    const message = choice.message;
    const toolCalls = isRecord(message) ? parseToolCalls(message.tool_calls) : [];
    if (!isRecord(message) || (typeof message.content !== 'string' && toolCalls.length === 0)) {
      throw badResponse('choices[0].message.content is missing');
    }
    const usage = json.usage;
    if (!isRecord(usage)) throw badResponse('usage is missing');
    const inputTokens = usage.prompt_tokens;
    const outputTokens = usage.completion_tokens;
    if (!isCount(inputTokens) || !isCount(outputTokens)) {
      throw badResponse('usage.prompt_tokens or usage.completion_tokens is not a token count');
    }
    const details = usage.prompt_tokens_details;
    const cached = isRecord(details) ? details.cached_tokens : undefined;
    let cachedInputTokens = 0;
    if (cached !== undefined && cached !== null) {
      if (!isCount(cached) || cached > inputTokens) {
        throw badResponse('usage.prompt_tokens_details.cached_tokens is not a valid token count');
      }
      cachedInputTokens = cached;
    }
    const reportedModel = json.model;
    return {
      text: typeof message.content === 'string' ? message.content : '',
      ...(toolCalls.length ? { toolCalls } : {}),
      usage: { inputTokens, cachedInputTokens, outputTokens },
      modelId:
        typeof reportedModel === 'string' && reportedModel.trim() ? reportedModel : this.modelId,
      finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    };
  }

  /** The server's `error.message` (or the start of a non-JSON body), truncated and scrubbed. */
  #serverMessage(text: string): string {
    let message: string | undefined;
    try {
      const json: unknown = JSON.parse(text);
      if (isRecord(json)) {
        const error = json.error;
        if (isRecord(error) && typeof error.message === 'string') message = error.message;
        else if (typeof error === 'string') message = error;
        else if (typeof json.message === 'string') message = json.message;
      }
    } catch {
      message = text;
    }
    if (message === undefined) return '';
    // Scrub before truncating, so that a key cut at the limit cannot leak in part.
    return truncate(this.#scrub(message.replace(/\s+/g, ' ').trim()), MAX_QUOTED_CHARS);
  }

  /** Removes the API key from text quoted back to the caller (a server may echo it). */
  #scrub(text: string): string {
    const key = this.#apiKey;
    return key ? text.split(key).join('[redacted]') : text;
  }

  #origin(): string {
    return new URL(this.baseUrl).origin;
  }
}

/** The provider configured by the `MODEL_*` variables (platform/config.ts); null when there is none. */
export function providerFromConfig(model: ModelSettings | null): ModelProvider | null {
  return model ? new OpenAiCompatibleProvider(model) : null;
}

/** A message as the chat-completions API takes it. */
function wireMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.toolCalls?.length)
    out.tool_calls = m.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  if (m.toolCallId) out.tool_call_id = m.toolCallId;
  return out;
}

/** `message.tool_calls`: function calls with an id, a name and JSON arguments text. */
function parseToolCalls(value: unknown): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badResponse('choices[0].message.tool_calls is not an array');
  return value.map((call: unknown) => {
    const fn = isRecord(call) ? call.function : undefined;
    if (
      !isRecord(call) ||
      typeof call.id !== 'string' ||
      !isRecord(fn) ||
      typeof fn.name !== 'string' ||
      typeof fn.arguments !== 'string'
    )
      throw badResponse('a tool call lacks id, function.name or function.arguments');
    return { id: call.id, name: fn.name, arguments: fn.arguments };
  });
}

function badResponse(what: string): ModelError {
  return new ModelError(
    'model_bad_response',
    `model server sent a malformed completion: ${what}`,
    false,
    200,
  );
}

/**
 * Retry-After as milliseconds: `retry-after-ms` (sent by some vendors), else `Retry-After` as
 * delta-seconds or an HTTP date. Undefined when absent or unparseable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"); Date.parse alone would take "-3" as a year.
  if (!/^[A-Za-z]{3}, /.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function causeCode(err: unknown): string | undefined {
  // undici's fetch throws TypeError('fetch failed') with the socket error as `cause`
  // (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, ECONNRESET, UND_ERR_SOCKET...).
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
