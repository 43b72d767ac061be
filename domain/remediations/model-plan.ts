/**
 * The remediation agent's exchange with a model: the prompt (the findings and the template plan
 * to improve) and the parsing of its answer, a JSON plan. An answer that is not a valid plan is
 * refused (null) and the template plan stays.
 */
import { REMEDIATION_EFFORTS, REMEDIATION_RISKS } from '../contract/values';
import type { RemediationPlan } from './rules';

interface PromptFinding {
  control_key: string;
  title: string;
  detail: string;
  severity: string;
  entity_key: string | null;
  locations: Array<{ path: string; start_line: number; end_line: number }>;
}

/** Bounds a model plan must keep (the same as a plan a person submits). */
export const PLAN_LIMITS = {
  summary: 4000,
  steps: 50,
  stepTitle: 500,
  stepDetail: 4000,
  entityKeys: 500,
} as const;

export function planPrompt(
  findings: readonly PromptFinding[],
  template: RemediationPlan,
): Array<{ role: 'system' | 'user'; content: string }> {
  const facts = findings.map((f) => ({
    control: f.control_key,
    title: f.title,
    detail: f.detail,
    severity: f.severity,
    entity: f.entity_key,
    locations: f.locations.slice(0, 20),
  }));
  return [
    {
      role: 'system',
      content:
        'You plan fixes for architecture audit findings. Answer with one JSON object only: {"summary": string, "steps": [{"title": string, "detail": string}], "risk": "low"|"medium"|"high", "effort": "small"|"medium"|"large"}. Name the files to change. Keep steps concrete and ordered.',
    },
    {
      role: 'user',
      content: `Findings:\n${JSON.stringify(facts).slice(0, 40_000)}\n\nA generic plan to improve on:\n${JSON.stringify(template)}`,
    },
  ];
}

const isString = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.trim().length > 0 && v.length <= max;

/** The model's plan, or null when the answer is not one (the affected entities stay the template's). */
export function parseModelPlan(text: string, template: RemediationPlan): RemediationPlan | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let json: unknown;
  try {
    json = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (typeof json !== 'object' || json === null) return null;
  const o = json as Record<string, unknown>;
  if (!isString(o.summary, PLAN_LIMITS.summary)) return null;
  if (!Array.isArray(o.steps) || o.steps.length < 1 || o.steps.length > PLAN_LIMITS.steps)
    return null;
  const steps = [];
  for (const s of o.steps as unknown[]) {
    const step = s as Record<string, unknown> | null;
    if (
      !step ||
      !isString(step.title, PLAN_LIMITS.stepTitle) ||
      !isString(step.detail, PLAN_LIMITS.stepDetail)
    )
      return null;
    steps.push({ title: step.title, detail: step.detail });
  }
  const risk = REMEDIATION_RISKS.find((r) => r === o.risk);
  const effort = REMEDIATION_EFFORTS.find((e) => e === o.effort);
  if (!risk || !effort) return null;
  return {
    summary: o.summary,
    steps,
    affected_entity_keys: template.affected_entity_keys,
    risk,
    effort,
  };
}
