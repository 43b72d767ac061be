/**
 * How a person moves an uncertainty case: a resolved or dismissed case carries a resolution
 * summary and the time it was settled; moving it back to open or investigating clears both.
 */
import type { UncertaintyStateName } from '../contract/values';

/** States in which a case is answered (resolved) or set aside (dismissed). */
export const SETTLED_STATES: readonly UncertaintyStateName[] = ['resolved', 'dismissed'];
/** States in which a case is still a question (counted as open). */
export const UNSETTLED_STATES: readonly UncertaintyStateName[] = ['open', 'investigating'];

export const isSettled = (state: UncertaintyStateName): boolean => SETTLED_STATES.includes(state);

/** What a person asks to change; an absent or null `state` keeps the state. */
export interface CaseChange {
  owner_id?: string | null;
  state?: UncertaintyStateName | null;
  resolution_summary?: string | null;
}

export interface CasePatch {
  owner_id?: string | null;
  state?: UncertaintyStateName;
  resolution_summary?: string | null;
  resolved_at?: Date | null;
}

/**
 * The row changes a request makes to a case, or the problem with it (a JSON pointer into the
 * request and why). A case settled again keeps its summary unless the request gives another,
 * and keeps the time it was first settled.
 */
export function casePatch(
  before: { state: UncertaintyStateName; resolution_summary: string | null },
  change: CaseChange,
  now: Date,
): { patch: CasePatch } | { problem: { path: string; message: string } } {
  const state = change.state ?? before.state;
  const patch: CasePatch = {};
  if (change.owner_id !== undefined) patch.owner_id = change.owner_id;
  if (change.state) patch.state = change.state;
  if (isSettled(state)) {
    const summary =
      change.resolution_summary !== undefined
        ? change.resolution_summary
        : isSettled(before.state)
          ? before.resolution_summary
          : null;
    if (!summary)
      return {
        problem: {
          path: '/resolution_summary',
          message: `is required (3 to 2000 characters) to mark the case ${state}`,
        },
      };
    patch.resolution_summary = summary;
    if (!isSettled(before.state)) patch.resolved_at = now;
  } else {
    if (change.resolution_summary)
      return {
        problem: {
          path: '/resolution_summary',
          message: `can only be set when the case is resolved or dismissed, not ${state}`,
        },
      };
    patch.resolution_summary = null;
    patch.resolved_at = null;
  }
  return { patch };
}
