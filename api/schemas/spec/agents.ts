/** Spec 2.2: agent runs. */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Decimal, FreeObject, Nullable, Strict, Uuid } from '../../schema-kit';

export const AgentArtifactResponse = Strict(
  'AgentArtifactResponse',
  {
    id: Uuid(),
    kind: Type.String(),
    title: Type.String(),
    artifact: FreeObject({ description: 'The structured output of the agent.' }),
    evidence_ids: Type.Array(Type.String(), { description: 'Evidence the artifact cites.' }),
    confidence: Decimal({ description: 'Confidence, 0 to 1.' }),
    created_at: DateTime(),
  },
  { description: 'Output of one agent run.' },
);
export type AgentArtifactResponse = Static<typeof AgentArtifactResponse>;

export const AgentRunResponse = Strict(
  'AgentRunResponse',
  {
    id: Uuid(),
    agent_key: Type.String({ description: 'Which agent ran.' }),
    agent_version: Type.String(),
    model_id: Type.String({ description: 'Model used by the agent.' }),
    reasoning_effort: Type.String(),
    status: Type.String({ description: 'One of queued, running, succeeded, failed, cancelled.' }),
    attempt: Type.Integer({ description: 'Attempt number of this run.' }),
    cache_hit: Type.Boolean({ description: 'True when an earlier artifact was reused.' }),
    started_at: Nullable(DateTime()),
    completed_at: Nullable(DateTime()),
    error_code: Nullable(Type.String({ description: 'Stable error code when the run failed.' })),
    artifact: Type.Optional(Nullable(AgentArtifactResponse)),
    cached_input_tokens: Type.Optional(Type.Integer({ default: 0 })),
    input_tokens: Type.Optional(Type.Integer({ default: 0 })),
    output_tokens: Type.Optional(Type.Integer({ default: 0 })),
    cost_usd: Type.Optional(Decimal({ default: '0', description: 'Cost in USD.' })),
  },
  { description: 'One attempt of one agent within an audit.' },
);
export type AgentRunResponse = Static<typeof AgentRunResponse>;

export const AgentTimelineResponse = Strict(
  'AgentTimelineResponse',
  {
    audit_id: Uuid(),
    context_hash: Nullable(Type.String({ description: 'Hash of the context the agents saw.' })),
    runs: Type.Array(AgentRunResponse),
  },
  { description: 'The agent runs of an audit, in order.' },
);
export type AgentTimelineResponse = Static<typeof AgentTimelineResponse>;
