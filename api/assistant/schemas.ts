/**
 * Assistant conversations, messages, runs, limits and usage. The Assistant* response schemas are the
 * specification's (exact); ConversationCreate, ConversationResponse, QuestionCreate, the pages,
 * AssistantLimits and UsageResponse are ours.
 */
import { Type } from '@sinclair/typebox';
import { ASSISTANT_ROLES } from '../../domain/contract/values';
import {
  DateTime,
  Decimal,
  FreeObject,
  LiteralUnion,
  Nullable,
  pageFields,
  Strict,
  Uuid,
  ExpectedVersion,
} from '../schema-kit';
import { CursorPage, ResourceParams } from '../schema-parts';
import { LIMIT_BOUNDS } from '../../domain/assistant/limits';

const usd = (description = 'Cost in USD.') => Decimal({ description });

/** What model calls cost: USD and tokens (input, cached input, output). */
const costAndTokens = {
  cost_usd: usd(),
  input_tokens: Type.Integer(),
  cached_input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
};

export const AssistantMessageResponse = Strict(
  'AssistantMessageResponse',
  {
    id: Uuid(),
    conversation_id: Uuid(),
    author_id: Nullable(Uuid()),
    role: LiteralUnion(ASSISTANT_ROLES),
    content: Type.String(),
    structured: FreeObject({ description: 'Structured part of the message.' }),
    created_at: DateTime(),
  },
  { description: 'One message of an assistant conversation.' },
);

export const AssistantRunResponse = Strict(
  'AssistantRunResponse',
  {
    id: Uuid(),
    conversation_id: Uuid(),
    user_message_id: Uuid(),
    assistant_message_id: Nullable(Uuid()),
    context_snapshot_id: Nullable(Uuid()),
    status: Type.String({
      description: 'One of queued, running, completed, failed, cancelled, refused.',
    }),
    route: Nullable(Type.String()),
    specialist: Nullable(Type.String()),
    cache_hit: Type.Boolean(),
    ...costAndTokens,
    error_code: Nullable(Type.String({ description: 'Stable error code when the run failed.' })),
    created_at: DateTime(),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
  },
  { description: 'One assistant run answering a user message.' },
);

export const AssistantRunUsage = Strict(
  'AssistantRunUsage',
  {
    run_id: Uuid(),
    conversation_id: Uuid(),
    created_at: DateTime(),
    cache_hit: Type.Boolean(),
    ...costAndTokens,
  },
  { description: 'Usage of one assistant run.' },
);

export const AssistantConversationUsage = Strict(
  'AssistantConversationUsage',
  {
    conversation_id: Uuid(),
    title: Type.String(),
    questions: Type.Integer(),
    cached_questions: Type.Integer(),
    ...costAndTokens,
  },
  { description: 'Usage of one assistant conversation.' },
);

export const AssistantUsageDay = Strict(
  'AssistantUsageDay',
  {
    date: Type.String({ description: 'The day (YYYY-MM-DD).' }),
    questions: Type.Integer(),
    cached_questions: Type.Integer(),
    cost_usd: usd(),
  },
  { description: 'Assistant usage on one day.' },
);

export const AssistantUsageResponse = Strict(
  'AssistantUsageResponse',
  {
    period: Type.String({ description: 'Period the figures cover.' }),
    questions_today_user: Type.Integer(),
    questions_today_workspace: Type.Integer(),
    user_daily_limit: Type.Integer({ description: 'Daily question limit per user.' }),
    workspace_daily_limit: Type.Integer({ description: 'Daily question limit per workspace.' }),
    active_user_runs: Type.Integer(),
    active_workspace_runs: Type.Integer(),
    max_output_tokens: Type.Integer({ description: 'Maximum output tokens per run.' }),
    monthly_cost_usd: usd('Cost so far this month, in USD.'),
    monthly_limit_usd: usd('Monthly cost limit, in USD.'),
    remaining_usd: usd('Remaining monthly budget, in USD.'),
    cached_questions: Type.Optional(Type.Integer({ default: 0 })),
    uncached_questions: Type.Optional(Type.Integer({ default: 0 })),
    conversations: Type.Optional(Type.Array(AssistantConversationUsage)),
    daily: Type.Optional(Type.Array(AssistantUsageDay)),
    recent_runs: Type.Optional(Type.Array(AssistantRunUsage)),
  },
  { description: 'Assistant usage, limits and cost.' },
);

// ---------------------------------------------------------------------------------------------
// Ours: conversations, questions, pages, limits, workspace usage

export const ConversationParams = ResourceParams('conversation_id');
export const RunParams = ResourceParams('run_id');

export const ConversationCreate = Strict(
  'ConversationCreate',
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    repository_id: Uuid({ description: 'The repository the questions are about.' }),
    snapshot_id: Type.Optional(
      Nullable(
        Uuid({
          description:
            "Pin the conversation to this snapshot of the repository; default: every question reads the repository's latest completed snapshot.",
        }),
      ),
    ),
  },
  { description: 'A new assistant conversation.' },
);

export const ConversationResponse = Strict(
  'ConversationResponse',
  {
    id: Uuid(),
    title: Type.String(),
    repository_id: Uuid(),
    snapshot_id: Nullable(Uuid({ description: 'The pinned snapshot, or null (latest).' })),
    created_by: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime({ description: 'When the last question was asked.' }),
  },
  { description: 'An assistant conversation about one repository.' },
);
export const ConversationPage = CursorPage('ConversationPage', ConversationResponse);
export const MessagePage = CursorPage('MessagePage', AssistantMessageResponse);

export const ConversationListQuery = Type.Object(
  { ...pageFields(), repository_id: Type.Optional(Uuid()) },
  { additionalProperties: false },
);

export const QuestionCreate = Strict(
  'QuestionCreate',
  { content: Type.String({ minLength: 3, maxLength: 2000, description: 'The question.' }) },
  { description: 'A question to the assistant.' },
);

const limitFields = {
  user_daily_limit: Type.Integer({
    ...LIMIT_BOUNDS.daily,
    description: 'Questions per member per day.',
  }),
  workspace_daily_limit: Type.Integer({
    ...LIMIT_BOUNDS.daily,
    description: 'Questions per workspace per day.',
  }),
  monthly_limit_usd: Decimal({ description: 'Model cost per month, USD (0: no model spend).' }),
  max_output_tokens: Type.Integer({
    ...LIMIT_BOUNDS.max_output_tokens,
    description: 'Output tokens one run may have the model produce.',
  }),
  max_active_user_runs: Type.Integer({
    ...LIMIT_BOUNDS.active,
    description: 'Questions of one member being answered at once.',
  }),
  max_active_workspace_runs: Type.Integer({
    ...LIMIT_BOUNDS.active,
    description: 'Questions of the workspace being answered at once.',
  }),
  time_zone: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'IANA time zone of the day and month boundaries (default UTC).',
  }),
};

export const AssistantLimitsUpdate = Strict(
  'AssistantLimitsUpdate',
  {
    ...limitFields,
    expected_version: ExpectedVersion(
      'The version the client last read (0 while on the defaults).',
    ),
  },
  { description: "Replaces the workspace's assistant limits (every field)." },
);

export const AssistantLimitsResponse = Strict(
  'AssistantLimits',
  {
    workspace_id: Uuid(),
    ...limitFields,
    version: Type.Integer({ minimum: 0, description: '0 while the built-in defaults apply.' }),
    is_default: Type.Boolean(),
    updated_by: Nullable(Uuid()),
    updated_at: Nullable(DateTime()),
  },
  { description: "A workspace's assistant limits." },
);

const UsageFigures = Strict(
  'UsageFigures',
  {
    runs: Type.Integer({ description: 'Agent runs (audit) or assistant runs.' }),
    ...costAndTokens,
  },
  { description: 'Runs, cost and tokens.' },
);

export const UsageResponse = Strict(
  'UsageResponse',
  {
    period: Type.String({ description: 'The month, YYYY-MM.' }),
    time_zone: Type.String({
      description: "Days are counted in the workspace's assistant time zone.",
    }),
    from: DateTime(),
    to: DateTime({ description: 'Exclusive.' }),
    audit: UsageFigures,
    assistant: UsageFigures,
    total_cost_usd: usd(),
    days: Type.Array(
      Strict('UsageDay', { date: Type.String(), audit: UsageFigures, assistant: UsageFigures }),
    ),
    repositories: Type.Array(
      Strict('UsageRepository', {
        repository_id: Nullable(Uuid({ description: 'Null: uploads and deleted repositories.' })),
        name: Nullable(Type.String()),
        audit: UsageFigures,
        assistant: UsageFigures,
      }),
    ),
  },
  { description: 'Audit and assistant model cost and tokens of one month, by day and repository.' },
);

export const UsageQuery = Type.Object(
  {
    period: Type.Optional(
      Type.String({
        pattern: '^2[0-9]{3}-(0[1-9]|1[0-2])$',
        description: 'YYYY-MM; default the current month.',
      }),
    ),
  },
  { additionalProperties: false },
);
