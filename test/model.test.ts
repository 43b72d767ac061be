/**
 * The model provider (activities/agents/model.ts) over real HTTP against the loopback fake
 * server, and the price table and exact cost arithmetic (domain/audits/pricing.ts).
 */
import test, { type ExecutionContext } from 'ava';
import { inspect } from 'node:util';
import {
  ModelError,
  OpenAiCompatibleProvider,
  parseRetryAfter,
  providerFromConfig,
  type CompletionRequest,
  type ModelErrorCode,
} from '../activities/audits/agents/model';
import { parseMicros, type ModelPrice } from '../domain/audits/pricing';
import { addUsd, costUsd, formatMicros } from '../domain/audits/pricing';
import { loadConfig } from '../platform/config';
import { startFakeModelServer, type FakeModelServer } from './helpers/fake-model';

const API_KEY = 'sk-test-SUPERSECRET-0123456789';

async function fakeServer(t: ExecutionContext): Promise<FakeModelServer> {
  const server = await startFakeModelServer();
  t.teardown(() => server.close());
  return server;
}

function providerFor(
  server: { baseUrl: string },
  apiKey: string | null = API_KEY,
): OpenAiCompatibleProvider {
  return new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, apiKey, modelId: 'gpt-test' });
}

const request = (overrides: Partial<CompletionRequest> = {}): CompletionRequest => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say ok.' },
  ],
  maxOutputTokens: 256,
  timeoutMs: 5_000,
  ...overrides,
});

async function expectModelError(
  t: ExecutionContext,
  promise: Promise<unknown>,
  code: ModelErrorCode,
  retryable: boolean,
): Promise<ModelError> {
  const err = await t.throwsAsync(promise, { instanceOf: ModelError });
  t.is(err.code, code);
  t.is(err.retryable, retryable);
  t.is(err.name, 'ModelError');
  t.false(err.message.includes(API_KEY), 'the API key never appears in an error message');
  t.false(inspect(err).includes(API_KEY), 'nor anywhere in the error object');
  t.false(JSON.stringify(err).includes(API_KEY));
  return err;
}

// ---------------------------------------------------------------------------------------------
// Provider: success

test('a completion returns text, usage, model and finish reason; the request is well-formed', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({
    text: 'Hello there',
    usage: { prompt_tokens: 120, completion_tokens: 7 },
  });
  const result = await providerFor(server).complete(request());

  t.deepEqual(result, {
    text: 'Hello there',
    usage: { inputTokens: 120, cachedInputTokens: 0, outputTokens: 7 },
    modelId: 'gpt-test',
    finishReason: 'stop',
  });
  t.is(server.requests.length, 1);
  const sent = server.requests[0]!;
  t.is(sent.headers.authorization, `Bearer ${API_KEY}`);
  t.regex(String(sent.headers['content-type']), /^application\/json/);
  t.deepEqual(sent.body, {
    model: 'gpt-test',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say ok.' },
    ],
    max_tokens: 256,
  });
});

test('reasoning_effort is sent when given and omitted when null', async (t) => {
  const server = await fakeServer(t);
  const provider = providerFor(server);
  await provider.complete(request({ reasoningEffort: 'high' }));
  await provider.complete(request({ reasoningEffort: null }));
  t.is(server.requests[0]!.body.reasoning_effort, 'high');
  t.false('reasoning_effort' in server.requests[1]!.body);
});

test('maxTokensParam switches the cap to max_completion_tokens (and only that)', async (t) => {
  const server = await fakeServer(t);
  const provider = new OpenAiCompatibleProvider({
    baseUrl: server.baseUrl,
    apiKey: null,
    modelId: 'o-test',
    maxTokensParam: 'max_completion_tokens',
  });
  await provider.complete(request({ maxOutputTokens: 99 }));
  const body = server.requests[0]!.body;
  t.is(body.max_completion_tokens, 99);
  t.false('max_tokens' in body);
});

test('without an API key no Authorization header is sent', async (t) => {
  const server = await fakeServer(t);
  await providerFor(server, null).complete(request());
  t.is(server.requests[0]!.headers.authorization, undefined);
});

test('cached_tokens is read into cachedInputTokens; inputTokens keeps prompt_tokens', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({
    text: 'x',
    usage: { prompt_tokens: 2_000, completion_tokens: 30, cached_tokens: 1_536 },
  });
  const result = await providerFor(server).complete(request());
  t.deepEqual(result.usage, { inputTokens: 2_000, cachedInputTokens: 1_536, outputTokens: 30 });
});

test('the model id is the one the server reports, else the configured one', async (t) => {
  const server = await fakeServer(t);
  const base = {
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'length' }],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  };
  server.enqueue({ body: { ...base, model: 'gpt-test-2025-01-01' } }, { body: base });
  const provider = providerFor(server);
  const first = await provider.complete(request());
  t.is(first.modelId, 'gpt-test-2025-01-01');
  t.is(first.finishReason, 'length');
  const second = await provider.complete(request());
  t.is(second.modelId, 'gpt-test');
  t.deepEqual(second.usage, { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 });
});

test('a trailing slash on the base URL is ignored', async (t) => {
  const server = await fakeServer(t);
  const provider = providerFor({ baseUrl: `${server.baseUrl}/` });
  t.is(provider.baseUrl, server.baseUrl);
  t.is((await provider.complete(request())).text, 'ok');
});

test('the default fake reply is 200 "ok" with usage 10/5/0', async (t) => {
  const server = await fakeServer(t);
  const result = await providerFor(server).complete(request());
  t.is(result.text, 'ok');
  t.deepEqual(result.usage, { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 });
});

// ---------------------------------------------------------------------------------------------
// Provider: error mapping

test('429 -> model_rate_limited, retryable, Retry-After seconds as retryAfterMs', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 429, text: 'Rate limit reached', headers: { 'Retry-After': '7' } });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_rate_limited',
    true,
  );
  t.is(err.status, 429);
  t.is(err.retryAfterMs, 7_000);
  t.true(err.message.includes('Rate limit reached'));
});

test('429 without Retry-After has no retryAfterMs', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 429 });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_rate_limited',
    true,
  );
  t.is(err.retryAfterMs, undefined);
});

test('parseRetryAfter reads retry-after-ms, delta-seconds and HTTP dates', (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.is(parseRetryAfter(new Headers({ 'retry-after': '2' }), now), 2_000);
  t.is(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now), 500);
  t.is(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now), 1_500);
  t.is(
    parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now),
    30_000,
  );
  t.is(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }), now), 0);
  t.is(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now), undefined);
  t.is(parseRetryAfter(new Headers({ 'retry-after': '-3' }), now), undefined);
  t.is(parseRetryAfter(new Headers(), now), undefined);
});

for (const status of [500, 502, 503]) {
  test(`${status} -> model_unavailable, retryable`, async (t) => {
    const server = await fakeServer(t);
    server.enqueue({ status, text: 'The server is overloaded' });
    const err = await expectModelError(
      t,
      providerFor(server).complete(request()),
      'model_unavailable',
      true,
    );
    t.is(err.status, status);
    t.true(err.message.includes('The server is overloaded'));
  });
}

test('400 -> model_request_rejected, not retryable, quoting the server message', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 400, text: "Unsupported parameter: 'max_tokens'" });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_request_rejected',
    false,
  );
  t.is(err.status, 400);
  t.true(err.message.includes("Unsupported parameter: 'max_tokens'"));
  t.is(err.retryAfterMs, undefined);
});

test('a server message echoing the API key is redacted', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 401, text: `Incorrect API key provided: ${API_KEY}.` });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_request_rejected',
    false,
  );
  t.is(err.status, 401);
  t.true(err.message.includes('Incorrect API key provided: [redacted].'));
});

test('a long server message is truncated, and a key at the cut is still redacted', async (t) => {
  const server = await fakeServer(t);
  // The key straddles the 500-character limit.
  server.enqueue({ status: 400, text: `${'x'.repeat(490)}${API_KEY}${'y'.repeat(5_000)}` });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_request_rejected',
    false,
  );
  t.true(err.message.length < 700);
  t.false(err.message.includes(API_KEY.slice(0, 10)));
  t.false(err.message.includes('y'.repeat(100)));
});

test('a non-JSON error body is quoted as text', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({
    status: 404,
    body: 'Not Found: /v1/chat/completions',
    headers: { 'Content-Type': 'text/plain' },
  });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_request_rejected',
    false,
  );
  t.is(err.status, 404);
  t.true(err.message.includes('Not Found: /v1/chat/completions'));
});

test('a wrong base path (the fake 404s it) is a rejected request', async (t) => {
  const server = await fakeServer(t);
  const provider = providerFor({ baseUrl: server.baseUrl.replace(/\/v1$/, '/v2') });
  const err = await expectModelError(
    t,
    provider.complete(request()),
    'model_request_rejected',
    false,
  );
  t.is(err.status, 404);
  t.is(server.requests.length, 0, 'only chat-completion requests are recorded');
});

test('a redirect is not followed: model_request_rejected', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 307, body: '', headers: { Location: 'https://elsewhere.example/v1' } });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_request_rejected',
    false,
  );
  t.is(err.status, 307);
  t.regex(err.message, /redirect/);
});

test('an answer slower than timeoutMs -> model_timeout, retryable', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ delayMs: 10_000 });
  const started = Date.now();
  const err = await expectModelError(
    t,
    providerFor(server).complete(request({ timeoutMs: 200 })),
    'model_timeout',
    true,
  );
  const elapsed = Date.now() - started;
  t.true(elapsed >= 150 && elapsed < 5_000, `took ${elapsed} ms`);
  t.regex(err.message, /timed out after 200 ms/);
  t.is(err.status, undefined);
});

test("the caller's abort signal ends the request as model_timeout", async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ delayMs: 10_000 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const started = Date.now();
  const err = await expectModelError(
    t,
    providerFor(server).complete(request({ timeoutMs: 30_000, signal: controller.signal })),
    'model_timeout',
    true,
  );
  t.true(Date.now() - started < 5_000);
  t.regex(err.message, /aborted/);
});

test('an already-aborted signal fails at once', async (t) => {
  const server = await fakeServer(t);
  await expectModelError(
    t,
    providerFor(server).complete(request({ signal: AbortSignal.abort() })),
    'model_timeout',
    true,
  );
});

test('408 from the server -> model_timeout, retryable', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({ status: 408 });
  const err = await expectModelError(
    t,
    providerFor(server).complete(request()),
    'model_timeout',
    true,
  );
  t.is(err.status, 408);
});

test('a closed port -> model_unreachable, retryable', async (t) => {
  const server = await startFakeModelServer();
  const baseUrl = server.baseUrl;
  await server.close();
  const err = await expectModelError(
    t,
    providerFor({ baseUrl }).complete(request()),
    'model_unreachable',
    true,
  );
  t.regex(err.message, /ECONNREFUSED/);
  t.is(err.status, undefined);
});

test('a DNS failure -> model_unreachable, retryable', async (t) => {
  const fetchImpl: typeof fetch = () => {
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND models.invalid'), {
      code: 'ENOTFOUND',
    });
    return Promise.reject(new TypeError('fetch failed', { cause }));
  };
  const provider = new OpenAiCompatibleProvider({
    baseUrl: 'https://models.invalid/v1',
    apiKey: API_KEY,
    modelId: 'gpt-test',
    fetchImpl,
  });
  const err = await expectModelError(t, provider.complete(request()), 'model_unreachable', true);
  t.regex(err.message, /ENOTFOUND/);
  t.regex(err.message, /https:\/\/models\.invalid/);
});

const malformed: Array<[string, unknown]> = [
  ['a non-JSON body', 'this is not json'],
  ['an empty object', {}],
  ['a JSON array', []],
  ['empty choices', { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }],
  [
    'null content (e.g. a tool call)',
    {
      choices: [
        { index: 0, message: { role: 'assistant', content: null }, finish_reason: 'tool_calls' },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    },
  ],
  ['no usage', { choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }],
  [
    'non-numeric usage',
    {
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }],
      usage: { prompt_tokens: '10', completion_tokens: 5 },
    },
  ],
  [
    'negative usage',
    {
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }],
      usage: { prompt_tokens: -1, completion_tokens: 5 },
    },
  ],
  [
    'more cached than prompt tokens',
    {
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 11 },
      },
    },
  ],
];

for (const [name, body] of malformed) {
  test(`a 200 with ${name} -> model_bad_response, not retryable`, async (t) => {
    const server = await fakeServer(t);
    server.enqueue({ body });
    const err = await expectModelError(
      t,
      providerFor(server).complete(request()),
      'model_bad_response',
      false,
    );
    t.is(err.status, 200);
  });
}

test('empty content is a valid completion (with its finish reason)', async (t) => {
  const server = await fakeServer(t);
  server.enqueue({
    body: {
      choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 3, completion_tokens: 256, prompt_tokens_details: null },
    },
  });
  const result = await providerFor(server).complete(request());
  t.is(result.text, '');
  t.is(result.finishReason, 'length');
  t.deepEqual(result.usage, { inputTokens: 3, cachedInputTokens: 0, outputTokens: 256 });
});

test('queued replies are served in order, then the default', async (t) => {
  const server = await fakeServer(t);
  server.setDefault({ text: 'default', usage: { prompt_tokens: 1, completion_tokens: 2 } });
  server.enqueue({ text: 'first' }, { status: 503 }, { text: 'third' });
  const provider = providerFor(server);
  t.is((await provider.complete(request())).text, 'first');
  await t.throwsAsync(provider.complete(request()), { instanceOf: ModelError });
  t.is((await provider.complete(request())).text, 'third');
  t.is((await provider.complete(request())).text, 'default');
  t.is(server.requests.length, 4);
});

test('bad arguments are programming errors, not ModelErrors', async (t) => {
  t.throws(
    () => new OpenAiCompatibleProvider({ baseUrl: 'not a url', apiKey: null, modelId: 'm' }),
    {
      instanceOf: TypeError,
    },
  );
  t.throws(
    () => new OpenAiCompatibleProvider({ baseUrl: 'ftp://host/v1', apiKey: null, modelId: 'm' }),
    { instanceOf: TypeError },
  );
  t.throws(
    () => new OpenAiCompatibleProvider({ baseUrl: 'http://host/v1', apiKey: null, modelId: ' ' }),
    { instanceOf: TypeError },
  );
  const provider = new OpenAiCompatibleProvider({
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: null,
    modelId: 'm',
  });
  await t.throwsAsync(provider.complete(request({ timeoutMs: 0 })), { instanceOf: RangeError });
  await t.throwsAsync(provider.complete(request({ maxOutputTokens: 1.5 })), {
    instanceOf: RangeError,
  });
});

test('the provider object does not expose its API key', (t) => {
  const provider = providerFor({ baseUrl: 'http://127.0.0.1:9/v1' });
  t.false(inspect(provider, { depth: 5 }).includes(API_KEY));
  t.false(JSON.stringify(provider).includes(API_KEY));
});

// ---------------------------------------------------------------------------------------------
// The provider and prices configured by MODEL_* (platform/config.ts)

const configuredProvider = (env: NodeJS.ProcessEnv) => providerFromConfig(loadConfig(env).model);
const configuredPrices = (env: NodeJS.ProcessEnv) => loadConfig(env).modelPrices;

test('no provider unless MODEL_BASE_URL and MODEL_ID are set', (t) => {
  t.is(configuredProvider({}), null);
  t.is(configuredProvider({ MODEL_BASE_URL: 'https://api.openai.com/v1' }), null);
  t.is(configuredProvider({ MODEL_ID: 'gpt-4o' }), null);
  t.is(configuredProvider({ MODEL_BASE_URL: ' ', MODEL_ID: 'gpt-4o' }), null);
  t.is(
    configuredProvider({
      MODEL_BASE_URL: 'https://api.openai.com/v1',
      MODEL_ID: '',
      MODEL_API_KEY: 'k',
    }),
    null,
  );
});

test('MODEL_* build an OpenAI-compatible provider', async (t) => {
  const provider = configuredProvider({
    MODEL_BASE_URL: 'https://api.openai.com/v1/',
    MODEL_ID: 'gpt-4o-mini',
    MODEL_API_KEY: API_KEY,
  });
  t.true(provider instanceof OpenAiCompatibleProvider);
  t.is(provider?.baseUrl, 'https://api.openai.com/v1');
  t.is(provider?.modelId, 'gpt-4o-mini');
  t.is((provider as OpenAiCompatibleProvider).maxTokensParam, 'max_tokens');

  const server = await fakeServer(t);
  const keyless = configuredProvider({
    MODEL_BASE_URL: server.baseUrl,
    MODEL_ID: 'local-model',
    MODEL_API_KEY: '',
    MODEL_MAX_TOKENS_PARAM: 'max_completion_tokens',
  });
  const result = await keyless!.complete(request({ maxOutputTokens: 64 }));
  t.is(result.modelId, 'local-model');
  t.is(server.requests[0]!.headers.authorization, undefined);
  t.is(server.requests[0]!.body.max_completion_tokens, 64);

  t.throws(
    () =>
      configuredProvider({
        MODEL_BASE_URL: server.baseUrl,
        MODEL_ID: 'm',
        MODEL_MAX_TOKENS_PARAM: 'max_output_tokens',
      }),
    { message: /MODEL_MAX_TOKENS_PARAM/ },
  );
});

// ---------------------------------------------------------------------------------------------
// Pricing: decimal parsing and formatting

test('parseMicros reads decimals with up to 6 fractional digits exactly', (t) => {
  t.is(parseMicros('0'), 0n);
  t.is(parseMicros('2.50'), 2_500_000n);
  t.is(parseMicros('2.5'), 2_500_000n);
  t.is(parseMicros('10'), 10_000_000n);
  t.is(parseMicros('10.00'), 10_000_000n);
  t.is(parseMicros('0.000001'), 1n);
  t.is(parseMicros('1.25'), 1_250_000n);
  t.is(parseMicros('007.5'), 7_500_000n);
  t.is(parseMicros('0.1'), 100_000n);
  t.is(parseMicros('999999999999999999.999999'), 999_999_999_999_999_999_999_999n);
});

for (const bad of [
  '',
  ' ',
  '-1',
  '-0.5',
  '+1',
  '1e3',
  '1E-6',
  '1.',
  '.5',
  '1.0000001',
  '0.0000005',
  '1,5',
  ' 2.5',
  '2.5 ',
  'NaN',
  'Infinity',
  '0x10',
  '１',
  '1.2.3',
  '9'.repeat(41),
]) {
  test(`parseMicros rejects ${JSON.stringify(bad)}`, (t) => {
    t.throws(() => parseMicros(bad));
  });
}

test('formatMicros always prints 6 decimals', (t) => {
  t.is(formatMicros(0n), '0.000000');
  t.is(formatMicros(1n), '0.000001');
  t.is(formatMicros(12_345n), '0.012345');
  t.is(formatMicros(3_683_329n), '3.683329');
  t.is(formatMicros(10_000_000n), '10.000000');
  t.throws(() => formatMicros(-1n));
});

// ---------------------------------------------------------------------------------------------
// Pricing: the price table

test('unset or blank MODEL_PRICES is an empty price table', (t) => {
  t.deepEqual(configuredPrices({}), {});
  t.deepEqual(configuredPrices({ MODEL_PRICES: '' }), {});
  t.deepEqual(configuredPrices({ MODEL_PRICES: '  ' }), {});
  t.deepEqual(configuredPrices({ MODEL_PRICES: '{}' }), {});
});

test('MODEL_PRICES: valid entries are read', (t) => {
  const table = configuredPrices({
    MODEL_PRICES: JSON.stringify({
      'gpt-4o': { input: '2.50', cached_input: '1.25', output: '10.00' },
      'local/llama-3.1-8b': { input: '0', cached_input: '0', output: '0.000001' },
    }),
  });
  t.deepEqual(table, {
    'gpt-4o': { input: '2.50', cachedInput: '1.25', output: '10.00' },
    'local/llama-3.1-8b': { input: '0', cachedInput: '0', output: '0.000001' },
  });
});

const badTables: Array<[string, string, RegExp]> = [
  ['invalid JSON', '{"gpt-4o": {', /MODEL_PRICES is not valid JSON/],
  ['a JSON array', '[]', /must be a JSON object/],
  ['JSON null', 'null', /must be a JSON object/],
  ['a JSON string', '"2.50"', /must be a JSON object/],
  [
    'an entry that is not an object',
    '{"gpt-4o": "2.50"}',
    /MODEL_PRICES\["gpt-4o"\] must be an object/,
  ],
  ['an entry that is an array', '{"gpt-4o": []}', /MODEL_PRICES\["gpt-4o"\] must be an object/],
  [
    'a missing field',
    '{"gpt-4o": {"input": "2.50", "output": "10.00"}}',
    /MODEL_PRICES\["gpt-4o"\] is missing cached_input/,
  ],
  [
    'a camelCase field',
    '{"gpt-4o": {"input": "2.50", "cachedInput": "1.25", "output": "10.00"}}',
    /MODEL_PRICES\["gpt-4o"\] has an unknown field "cachedInput"/,
  ],
  [
    'a number instead of a string',
    '{"gpt-4o": {"input": 2.5, "cached_input": "1.25", "output": "10.00"}}',
    /MODEL_PRICES\["gpt-4o"\]\.input must be a decimal string/,
  ],
  [
    'a negative price',
    '{"ok": {"input": "1", "cached_input": "1", "output": "1"}, "bad": {"input": "1", "cached_input": "1", "output": "-1"}}',
    /MODEL_PRICES\["bad"\]\.output/,
  ],
  [
    'seven decimals',
    '{"gpt-4o": {"input": "2.5000001", "cached_input": "1.25", "output": "10.00"}}',
    /MODEL_PRICES\["gpt-4o"\]\.input: not a non-negative decimal/,
  ],
  [
    'an empty model id',
    '{"": {"input": "1", "cached_input": "1", "output": "1"}}',
    /MODEL_PRICES\[""\]/,
  ],
];

for (const [name, raw, message] of badTables) {
  test(`MODEL_PRICES: ${name} is refused, naming the bad entry`, (t) => {
    t.throws(() => configuredPrices({ MODEL_PRICES: raw }), { message });
  });
}

// ---------------------------------------------------------------------------------------------
// Pricing: cost

const GPT: ModelPrice = { input: '2.50', cachedInput: '1.25', output: '10.00' };

test('costUsd: the worked example', (t) => {
  // uncached 1,000,000 * 2.50 / 1e6 = 2.500000000000
  // cached     234,567 * 1.25 / 1e6 = 0.293208750000
  // output      89,012 * 10.0 / 1e6 = 0.890120000000
  // total                           = 3.683328750000 -> half-up at 6 decimals = 3.683329
  t.is(
    costUsd({ inputTokens: 1_234_567, cachedInputTokens: 234_567, outputTokens: 89_012 }, GPT),
    '3.683329',
  );
});

test('costUsd: small example without cache', (t) => {
  // 1,234 * 2.50 / 1e6 = 0.003085; 567 * 10 / 1e6 = 0.005670; total 0.008755
  t.is(costUsd({ inputTokens: 1_234, cachedInputTokens: 0, outputTokens: 567 }, GPT), '0.008755');
});

test('costUsd: all input cached', (t) => {
  // 1,000 * 1.25 / 1e6 = 0.00125
  t.is(costUsd({ inputTokens: 1_000, cachedInputTokens: 1_000, outputTokens: 0 }, GPT), '0.001250');
});

test('costUsd rounds half-up at the 6th decimal', (t) => {
  const at = (output: string): ModelPrice => ({ input: '0', cachedInput: '0', output });
  const out = (outputTokens: number) => ({ inputTokens: 0, cachedInputTokens: 0, outputTokens });
  // 1 token at $0.5/M = $0.0000005 exactly: half rounds up.
  t.is(costUsd(out(1), at('0.5')), '0.000001');
  // Just below the half rounds down.
  t.is(costUsd(out(1), at('0.499999')), '0.000000');
  // 3 * 0.166667 = 0.500001 micro -> up; 3 * 0.166666 = 0.499998 micro -> down.
  t.is(costUsd(out(3), at('0.166667')), '0.000001');
  t.is(costUsd(out(3), at('0.166666')), '0.000000');
  // Half-up, not half-even: 2.5 micro -> 3, 1.5 micro -> 2, 0.5 -> 1.
  t.is(costUsd(out(1), at('2.5')), '0.000003');
  t.is(costUsd(out(1), at('1.5')), '0.000002');
  // 1e-12 granularity: 500,000 tokens at $0.000001/M = exactly half a micro-dollar.
  t.is(costUsd(out(500_000), at('0.000001')), '0.000001');
  t.is(costUsd(out(499_999), at('0.000001')), '0.000000');
  // 7 * 0.214285 = 1.499995 micro -> 1.
  t.is(costUsd(out(7), at('0.214285')), '0.000001');
});

test('costUsd rounds the sum once, not each part', (t) => {
  // 0.4 + 0.1 micro-dollars = 0.5 -> 0.000001 (each part alone would round to zero).
  const price: ModelPrice = { input: '0.4', cachedInput: '0', output: '0.1' };
  t.is(costUsd({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 }, price), '0.000001');
});

test('costUsd stays exact beyond float precision', (t) => {
  const price: ModelPrice = { input: '999999.999999', cachedInput: '0', output: '0' };
  // 9,007,199,254,740,991 * 999,999,999,999 pico = 9,007,199,254,731,983,800,745,259,009 pico.
  t.is(
    costUsd({ inputTokens: Number.MAX_SAFE_INTEGER, cachedInputTokens: 0, outputTokens: 0 }, price),
    '9007199254731983.800745',
  );
});

test('costUsd: zero usage costs nothing', (t) => {
  t.is(costUsd({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, GPT), '0.000000');
});

test('costUsd: an unknown model (no price) costs "0.000000"', (t) => {
  const table = configuredPrices({});
  t.is(
    costUsd(
      { inputTokens: 1_000_000, cachedInputTokens: 0, outputTokens: 1_000_000 },
      table['nope'],
    ),
    '0.000000',
  );
});

test('costUsd rejects impossible usage and bad prices', (t) => {
  t.throws(() => costUsd({ inputTokens: 10, cachedInputTokens: 11, outputTokens: 0 }, GPT), {
    instanceOf: RangeError,
  });
  t.throws(() => costUsd({ inputTokens: -1, cachedInputTokens: 0, outputTokens: 0 }, GPT));
  t.throws(() => costUsd({ inputTokens: 1.5, cachedInputTokens: 0, outputTokens: 0 }, GPT));
  t.throws(() => costUsd({ inputTokens: 0, cachedInputTokens: 0, outputTokens: NaN }, undefined));
  t.throws(() =>
    costUsd({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 0 }, { ...GPT, input: '1e-6' }),
  );
});

// ---------------------------------------------------------------------------------------------
// Pricing: addUsd

test('addUsd adds exactly with 6 decimals', (t) => {
  t.is(addUsd('0.1', '0.2'), '0.300000');
  t.is(addUsd('0', '0'), '0.000000');
  t.is(addUsd('3.683329', '0.008755'), '3.692084');
  t.is(addUsd('0.999999', '0.000001'), '1.000000');
  t.is(addUsd('123456789012345678.999999', '0.000001'), '123456789012345679.000000');
  let total = '0.000000';
  for (let i = 0; i < 10; i++) total = addUsd(total, '0.1');
  t.is(total, '1.000000');
});

test('addUsd rejects negatives and more than 6 decimals', (t) => {
  t.throws(() => addUsd('-1', '2'));
  t.throws(() => addUsd('1', '0.0000001'));
  t.throws(() => addUsd('1', 'abc'));
});
