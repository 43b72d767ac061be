/** The CI/CD controls: GitHub Actions pinned, permissions declared, privileged triggers guarded. */
import { uniqueSorted } from '../shared/text';
import type { StoredEvidence } from '../reconcile';
import type { ControlSpec } from './catalog';
import { bool, ofKind, onEvidence, type Check, type Context } from './check';

const GITHUB = 'github-actions';

function ciActionsPinned(ctx: Context): Check[] {
  return ofKind(ctx, 'action-use')
    .filter((e) => e.attributes.pin !== 'local')
    .map((e) => {
      const a = e.attributes;
      const uses = String(a.uses ?? e.object_key ?? '');
      if (a.first_party === true) {
        const pin = typeof a.pin === 'string' ? a.pin : null;
        return onEvidence(ctx, e, {
          requirement: 'first-party-actions-not-branch',
          verdict: pin === null ? 'unknown' : pin === 'branch' ? 'fail' : 'pass',
          title: `first-party action ${uses} is referenced by ${pin ?? 'an unknown ref'}`,
          facts: { pin, first_party: true },
          discriminator: uses,
        });
      }
      const pinned = bool(a.pinned);
      return onEvidence(ctx, e, {
        requirement: 'third-party-actions-sha-pinned',
        verdict: pinned === null ? 'unknown' : pinned ? 'pass' : 'fail',
        title: pinned
          ? `third-party action ${uses} is pinned`
          : `third-party action ${uses} is not pinned to a commit SHA`,
        facts: { pinned, pin: a.pin ?? null, first_party: a.first_party ?? null },
        discriminator: uses,
      });
    });
}

function ciPermissionsDeclared(ctx: Context): Check[] {
  const out: Check[] = [];
  const jobs = ofKind(ctx, 'job-declared').filter((e) => e.provider === GITHUB);
  const pipelinesWithJobs = new Set(jobs.map((j) => j.object_key));
  for (const e of jobs) {
    const source = e.attributes.permissions_source;
    out.push(
      onEvidence(ctx, e, {
        requirement: 'permissions-declared',
        verdict: typeof source !== 'string' ? 'unknown' : source === 'default' ? 'fail' : 'pass',
        title:
          source === 'default'
            ? `${e.subject_key} runs with the repository default permissions`
            : `${e.subject_key} permissions come from ${String(source ?? 'an unknown source')}`,
        facts: { permissions_source: source ?? null },
      }),
      noWriteAll(ctx, e),
    );
  }
  // Workflows without jobs in the evidence are judged on their own declaration.
  for (const e of ofKind(ctx, 'pipeline-declared')) {
    if (e.provider !== GITHUB || pipelinesWithJobs.has(e.subject_key)) continue;
    const declared = bool(e.attributes.permissions_declared);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'permissions-declared',
        verdict: declared === null ? 'unknown' : declared ? 'pass' : 'fail',
        title: `${e.subject_key} ${declared ? 'declares' : 'does not declare'} permissions`,
        facts: { permissions_declared: declared },
      }),
      noWriteAll(ctx, e),
    );
  }
  return out;
}

/** A job or workflow granted `write-all` fails; any narrower grant passes. */
function noWriteAll(ctx: Context, e: StoredEvidence): Check {
  const perms = e.attributes.permissions;
  return onEvidence(ctx, e, {
    requirement: 'no-write-all',
    verdict: perms === undefined ? 'unknown' : perms === 'write-all' ? 'fail' : 'pass',
    title: `${e.subject_key} is granted ${perms === 'write-all' ? 'write-all' : 'scoped permissions'}`,
    facts: { permissions: perms ?? null },
    discriminator: 'write-all',
  });
}

function ciNoRiskyTriggers(ctx: Context): Check[] {
  const jobs = ofKind(ctx, 'job-declared').filter((e) => e.provider === GITHUB);
  return ofKind(ctx, 'pipeline-declared')
    .filter((e) => e.provider === GITHUB)
    .map((e) => {
      const risky = e.attributes.risky_triggers;
      if (!Array.isArray(risky))
        return onEvidence(ctx, e, {
          requirement: 'risky-triggers-guarded',
          verdict: 'unknown',
          title: `${e.subject_key} triggers are unknown`,
          facts: { risky_triggers: null },
        });
      const mine = jobs.filter((j) => j.object_key === e.subject_key);
      const unguarded = mine.filter((j) => typeof j.attributes.if !== 'string' || !j.attributes.if);
      const fail = risky.length > 0 && (mine.length === 0 || unguarded.length > 0);
      return onEvidence(ctx, e, {
        requirement: 'risky-triggers-guarded',
        verdict: fail ? 'fail' : 'pass',
        title:
          risky.length === 0
            ? `${e.subject_key} has no pull_request_target/workflow_run trigger`
            : fail
              ? `${e.subject_key} runs on ${risky.map(String).join(', ')} without an if: guard on ${unguarded.length ? unguardedNames(unguarded) : 'its jobs'}`
              : `${e.subject_key} runs on ${risky.map(String).join(', ')} with every job guarded`,
        facts: {
          risky_triggers: risky,
          unguarded: uniqueSorted(unguarded.map((j) => j.subject_key)),
        },
        extra: risky.length > 0 ? mine.map((j) => j.id) : [],
      });
    });
}

function unguardedNames(jobs: StoredEvidence[]): string {
  return uniqueSorted(jobs.map((j) => j.subject_key)).join(', ');
}

export const CI_CONTROLS: ControlSpec[] = [
  {
    control: {
      key: 'ci-actions-pinned',
      title: 'CI actions pinned to a commit SHA',
      description:
        'Third-party GitHub Actions (and docker:// actions) are referenced by a full commit SHA (or image digest), so a moved tag cannot change what runs.',
      domain: 'cicd',
      severity: 'high',
      requirements: [
        {
          key: 'third-party-actions-sha-pinned',
          description: 'Every third-party action use is pinned to a full commit SHA or digest.',
        },
        {
          key: 'first-party-actions-not-branch',
          description:
            'First-party actions (actions/*, github/*) reference a tag or SHA, not a branch.',
        },
      ],
    },
    evaluate: ciActionsPinned,
    notApplicable: 'no GitHub Actions action use found',
  },
  {
    control: {
      key: 'ci-permissions-declared',
      title: 'CI workflow permissions declared',
      description:
        'Each GitHub Actions job runs with permissions declared at workflow or job level, not the repository default, and never write-all.',
      domain: 'cicd',
      severity: 'medium',
      requirements: [
        {
          key: 'permissions-declared',
          description: 'Workflow-level or job-level permissions are declared for every job.',
        },
        { key: 'no-write-all', description: 'No workflow or job is granted write-all.' },
      ],
    },
    evaluate: ciPermissionsDeclared,
    notApplicable: 'no GitHub Actions workflow found',
  },
  {
    control: {
      key: 'ci-no-risky-triggers',
      title: 'No unguarded privileged CI triggers',
      description:
        'Workflows triggered by pull_request_target or workflow_run (which run with secrets on untrusted input) guard every job with an `if:` condition.',
      domain: 'cicd',
      severity: 'high',
      requirements: [
        {
          key: 'risky-triggers-guarded',
          description: 'Every job of a pull_request_target/workflow_run workflow has an if: guard.',
        },
      ],
    },
    evaluate: ciNoRiskyTriggers,
    notApplicable: 'no GitHub Actions workflow found',
  },
];
