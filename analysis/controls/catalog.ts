/**
 * The shapes of the control catalog and of its assessments, and what a control family module
 * declares: each control's catalog entry beside the evaluator that assesses it
 * (analysis/controls/<family>.ts; analysis/controls.ts gathers them and assesses).
 */
import type {
  ASSESSMENT_STATUSES,
  CONTROL_DOMAINS,
  CONTROL_SEVERITIES,
  REQUIREMENT_STATUSES,
} from '../../domain/contract/values';
import type { EvidenceLocation } from '../evidence';
import type { Entity, Relationship, StoredEvidence } from '../reconcile';
import type { Check, Context } from './check';

export type ControlDomain = (typeof CONTROL_DOMAINS)[number];
export type Severity = (typeof CONTROL_SEVERITIES)[number];
export type AssessmentStatus = (typeof ASSESSMENT_STATUSES)[number];
export type RequirementStatus = (typeof REQUIREMENT_STATUSES)[number];

export interface ControlRequirement {
  key: string;
  description: string;
  /** Advisory requirements are reported but never fail the control. */
  advisory?: boolean;
}

export interface Control {
  key: string;
  title: string;
  description: string;
  domain: ControlDomain;
  severity: Severity;
  requirements: ControlRequirement[];
}

export interface AssessedRequirement {
  key: string;
  description: string;
  status: RequirementStatus;
  evidence_ids: string[];
  rationale: string;
}

export interface Finding {
  fingerprint: string;
  title: string;
  severity: Severity;
  entity_key: string | null;
  evidence_ids: string[];
  location: EvidenceLocation | null;
}

export interface Assessment {
  control_key: string;
  title: string;
  description: string;
  domain: ControlDomain;
  severity: Severity;
  status: AssessmentStatus;
  confidence: string;
  rationale: string;
  applicability: 'applicable' | 'not_applicable';
  applicability_rationale: string;
  evidence_ids: string[];
  failing_evidence_ids: string[];
  requirements: AssessedRequirement[];
  input_hash: string;
  findings: Finding[];
}

export interface ControlInput {
  entities: Entity[];
  relationships: Relationship[];
  evidence: StoredEvidence[];
  /** Paths of the files in the audited source (for file-presence controls such as CODEOWNERS). */
  files: string[];
}

/** One catalog control, how it is assessed, and why it is not applicable when nothing to check. */
export interface ControlSpec {
  control: Control;
  evaluate: (ctx: Context) => Check[];
  notApplicable: string;
}
