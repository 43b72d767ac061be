/** Assistant messages, runs and usage (the specification's schemas; no operation uses them yet). */
import { Type, type Static } from '@sinclair/typebox';
import { ASSISTANT_ROLES } from '../../domain/contract/values';
import { DateTime, Decimal, FreeObject, LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';

const usd = (description = 'Cost in USD.') => Decimal({ description });

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
export type AssistantMessageResponse = Static<typeof AssistantMessageResponse>;

export const AssistantRunResponse = Strict(
  'AssistantRunResponse',
  {
    id: Uuid(),
    conversation_id: Uuid(),
    user_message_id: Uuid(),
    assistant_message_id: Nullable(Uuid()),
    context_snapshot_id: Nullable(Uuid()),
    status: Type.String({ description: 'One of queued, running, succeeded, failed, cancelled.' }),
    route: Nullable(Type.String()),
    specialist: Nullable(Type.String()),
    cache_hit: Type.Boolean(),
    cost_usd: usd(),
    input_tokens: Type.Integer(),
    cached_input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    error_code: Nullable(Type.String({ description: 'Stable error code when the run failed.' })),
    created_at: DateTime(),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
  },
  { description: 'One assistant run answering a user message.' },
);
export type AssistantRunResponse = Static<typeof AssistantRunResponse>;

export const AssistantRunUsage = Strict(
  'AssistantRunUsage',
  {
    run_id: Uuid(),
    conversation_id: Uuid(),
    created_at: DateTime(),
    cache_hit: Type.Boolean(),
    cost_usd: usd(),
    input_tokens: Type.Integer(),
    cached_input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
  },
  { description: 'Usage of one assistant run.' },
);
export type AssistantRunUsage = Static<typeof AssistantRunUsage>;

export const AssistantConversationUsage = Strict(
  'AssistantConversationUsage',
  {
    conversation_id: Uuid(),
    title: Type.String(),
    questions: Type.Integer(),
    cached_questions: Type.Integer(),
    cost_usd: usd(),
    input_tokens: Type.Integer(),
    cached_input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
  },
  { description: 'Usage of one assistant conversation.' },
);
export type AssistantConversationUsage = Static<typeof AssistantConversationUsage>;

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
export type AssistantUsageDay = Static<typeof AssistantUsageDay>;

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
export type AssistantUsageResponse = Static<typeof AssistantUsageResponse>;
