/** Assistant rows as the API shows them. */
import type { ConversationRow, MessageRow, RunRow } from '../../db/assistant';
import { formatMicros, parseMicros } from '../../domain/audits/pricing';
import { iso, isoOrNull } from '../shared';

/** A numeric column's text as a 6-decimal USD amount. */
export const usd = (value: string | number): string => formatMicros(parseMicros(String(value)));

export function presentConversation(row: ConversationRow) {
  return {
    id: row.id,
    title: row.title,
    repository_id: row.repository_id,
    snapshot_id: row.snapshot_id,
    created_by: row.created_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function presentMessage(row: MessageRow) {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    author_id: row.author_id,
    role: row.role,
    content: row.content,
    structured: row.structured,
    created_at: iso(row.created_at),
  };
}

export function presentRun(row: RunRow) {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    user_message_id: row.user_message_id,
    assistant_message_id: row.assistant_message_id,
    context_snapshot_id: row.context_snapshot_id,
    status: row.status,
    route: row.route,
    specialist: row.specialist,
    cache_hit: row.cache_hit,
    cost_usd: usd(row.cost_usd),
    input_tokens: row.input_tokens,
    cached_input_tokens: row.cached_input_tokens,
    output_tokens: row.output_tokens,
    error_code: row.error_code,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    completed_at: isoOrNull(row.completed_at),
  };
}
