/** Spec 2.8: control assessment. The spec does not declare the no-unknown-properties rule here. */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Decimal, Nullable, Open, Uuid } from '../schema-kit';
import { RequirementResponse } from '../schemas/spec/gaps';

const ids = (description: string) => Type.Array(Type.String(), { description });

export const AssessmentResponse = Open(
  'AssessmentResponse',
  {
    id: Uuid(),
    control_id: Uuid(),
    mapping_version_id: Uuid(),
    control_key: Type.String(),
    title: Type.String(),
    description: Type.String(),
    domain: Type.String(),
    severity: Type.String(),
    status: Type.String({
      description: 'One of pass, fail, partial, not_applicable, insufficient_evidence.',
    }),
    calculation_version: Type.String(),
    input_hash: Type.String({ description: 'Hash of the inputs the assessment used.' }),
    rationale: Type.String(),
    applicability: Type.String(),
    applicability_rationale: Nullable(Type.String()),
    confidence: Decimal({ description: 'Confidence, 0 to 1.' }),
    evidence_ids: ids('Evidence the assessment rests on.'),
    finding_ids: ids('Findings raised.'),
    architecture_relationship_ids: ids('Relationships considered.'),
    stale_evidence_ids: ids('Evidence that is out of date.'),
    conflicting_evidence_ids: ids('Evidence that contradicts other evidence.'),
    missing_requirement_keys: ids('Requirements without evidence.'),
    exception_id: Nullable(Uuid()),
    calculated_at: DateTime(),
    requirements: Type.Array(RequirementResponse),
    overlay_version: Type.Integer(),
  },
  { description: 'Assessment of one control against evidence.' },
);
export type AssessmentResponse = Static<typeof AssessmentResponse>;
