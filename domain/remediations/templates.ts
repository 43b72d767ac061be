/**
 * Deterministic remediation plans, one template per control of the catalog: what the remediation
 * agent proposes when no model is configured (and the starting point it gives a model). The same
 * findings always give the same plan.
 */
import type { CONTROL_SEVERITIES } from '../contract/values';
import type { RemediationEffort, RemediationPlan, RemediationRisk } from './rules';

interface Template {
  /** What the fix achieves, one sentence. */
  goal: string;
  steps: Array<{ title: string; detail: string }>;
  effort: RemediationEffort;
}

/** One template per control key of the built-in catalog (a test holds them in step). */
export const REMEDIATION_TEMPLATES: Readonly<Record<string, Template>> = {
  'ci-actions-pinned': {
    goal: 'Pin every third-party CI action to a full commit SHA.',
    steps: [
      {
        title: 'Resolve each action reference to a commit',
        detail:
          'For each `uses: owner/action@tag` find the commit the tag points to (`git ls-remote`).',
      },
      {
        title: 'Pin by SHA, keep the tag as a comment',
        detail: 'Write `uses: owner/action@<40-hex sha> # vX.Y.Z` so updates stay readable.',
      },
      {
        title: 'Let a bot propose updates',
        detail: 'Enable Dependabot or Renovate for the CI ecosystem so pinned SHAs are bumped.',
      },
    ],
    effort: 'small',
  },
  'ci-permissions-declared': {
    goal: 'Declare least-privilege permissions for every CI workflow.',
    steps: [
      {
        title: 'Set a read-only default',
        detail: 'Add `permissions: contents: read` at the top of each workflow.',
      },
      {
        title: 'Grant writes per job',
        detail: 'Give only the jobs that publish or comment the write scopes they need.',
      },
    ],
    effort: 'small',
  },
  'ci-no-risky-triggers': {
    goal: 'Guard privileged CI triggers against untrusted input.',
    steps: [
      {
        title: 'Replace or guard pull_request_target',
        detail:
          'Use `pull_request` where secrets are not needed; otherwise check out only trusted refs and require an approval environment.',
      },
      {
        title: 'Never interpolate untrusted fields into scripts',
        detail: 'Pass titles and branch names through environment variables, not `${{ }}` in run.',
      },
    ],
    effort: 'medium',
  },
  'containers-not-privileged': {
    goal: 'Run no container in privileged mode.',
    steps: [
      {
        title: 'Remove privileged: true',
        detail: 'Drop the flag from the compose service or pod securityContext.',
      },
      {
        title: 'Grant only the capabilities needed',
        detail: 'Add the specific `cap_add` / `capabilities.add` entries the workload requires.',
      },
    ],
    effort: 'small',
  },
  'containers-resource-limits': {
    goal: 'Declare CPU and memory limits for every container.',
    steps: [
      {
        title: 'Measure current usage',
        detail: 'Read CPU and memory use from metrics for a representative period.',
      },
      {
        title: 'Set requests and limits',
        detail: 'Add `resources.limits` (Kubernetes) or `deploy.resources.limits` (compose).',
      },
    ],
    effort: 'small',
  },
  'containers-non-root': {
    goal: 'Run containers as a non-root user.',
    steps: [
      {
        title: 'Add a USER to the Dockerfile',
        detail: 'Create an unprivileged user and switch to it before the entrypoint.',
      },
      {
        title: 'Enforce at runtime',
        detail: 'Set `runAsNonRoot: true` in the pod securityContext (or `user:` in compose).',
      },
    ],
    effort: 'medium',
  },
  'datastores-not-public': {
    goal: 'Make no datastore reachable from the public internet.',
    steps: [
      {
        title: 'Close public access',
        detail:
          'Set `publicly_accessible = false` / remove public IPs and 0.0.0.0/0 ingress rules.',
      },
      {
        title: 'Reach it through the private network',
        detail: 'Connect clients through a VPC, private endpoint or bastion.',
      },
    ],
    effort: 'medium',
  },
  'storage-encrypted-at-rest': {
    goal: 'Encrypt every storage resource at rest.',
    steps: [
      {
        title: 'Enable encryption',
        detail: 'Set `storage_encrypted = true` or a server-side encryption configuration.',
      },
      {
        title: 'Plan the migration of existing data',
        detail: 'Existing volumes usually need a snapshot and restore into an encrypted copy.',
      },
    ],
    effort: 'medium',
  },
  'no-committed-secrets': {
    goal: 'Remove literal secrets from the repository and rotate them.',
    steps: [
      {
        title: 'Rotate the exposed secrets first',
        detail: 'Treat every committed value as leaked: issue new credentials, revoke the old.',
      },
      {
        title: 'Read secrets from the environment or a secret store',
        detail: 'Replace the literals with references (env vars, Kubernetes Secrets, a vault).',
      },
      {
        title: 'Stop it recurring',
        detail: 'Add a secret scanner to CI and a pre-commit hook.',
      },
    ],
    effort: 'medium',
  },
  'lockfile-present': {
    goal: 'Commit a dependency lockfile for every unit with a manifest.',
    steps: [
      {
        title: 'Generate the lockfile',
        detail:
          'Run the package manager install (npm install, go mod tidy...) and commit the lockfile.',
      },
      {
        title: 'Install from the lockfile in CI',
        detail: 'Use `npm ci` (or the equivalent) so builds fail when the lockfile is stale.',
      },
    ],
    effort: 'small',
  },
  'images-pinned': {
    goal: 'Reference every container image by an explicit version (ideally a digest).',
    steps: [
      {
        title: 'Replace latest and untagged references',
        detail: 'Pin each image to a release tag, or to `@sha256:<digest>`.',
      },
      {
        title: 'Automate bumps',
        detail: 'Let Renovate or Dependabot propose image updates.',
      },
    ],
    effort: 'small',
  },
  'no-shared-database': {
    goal: 'Give each datastore a single owning service.',
    steps: [
      {
        title: 'Choose the owner',
        detail: 'Decide which service owns the data; the others become its clients.',
      },
      {
        title: 'Expose an API instead of the tables',
        detail: 'Move the other services to the owner’s API or events, then revoke their access.',
      },
    ],
    effort: 'large',
  },
  'no-service-dependency-cycle': {
    goal: 'Break the dependency cycle between services.',
    steps: [
      {
        title: 'Find the weakest edge of the cycle',
        detail: 'Pick the call that is least essential or easiest to make asynchronous.',
      },
      {
        title: 'Invert or decouple it',
        detail: 'Replace it with an event, a callback the caller registers, or a shared library.',
      },
    ],
    effort: 'large',
  },
  'owners-declared': {
    goal: 'Declare code owners for the repository.',
    steps: [
      {
        title: 'Add a CODEOWNERS file',
        detail: 'Create `.github/CODEOWNERS` (or the root/docs location) naming owners per path.',
      },
      {
        title: 'Require owner review',
        detail: 'Turn on "require review from code owners" in branch protection.',
      },
    ],
    effort: 'small',
  },
};

/** Used for a control the templates do not know (a newer catalog than this code). */
const GENERIC: Template = {
  goal: 'Fix what the failing control observed.',
  steps: [
    {
      title: 'Read the finding and its evidence',
      detail: 'Open each location the finding cites and confirm the failing condition.',
    },
    {
      title: 'Change the configuration or code',
      detail: 'Make the control pass for each subject, then run an audit to confirm.',
    },
  ],
  effort: 'medium',
};

/** The finding fields a plan is made from. */
export interface PlanFinding {
  control_key: string;
  title: string;
  severity: (typeof CONTROL_SEVERITIES)[number];
  entity_key: string | null;
  locations: Array<{ path: string; start_line: number; end_line: number }>;
}

const RISK_OF: Record<PlanFinding['severity'], RemediationRisk> = {
  high: 'high',
  medium: 'medium',
  low: 'low',
};
const EFFORT_ORDER: readonly RemediationEffort[] = ['small', 'medium', 'large'];
const RISK_ORDER: readonly RemediationRisk[] = ['low', 'medium', 'high'];

/** Locations listed in one step, at most. */
const MAX_LOCATIONS = 20;

/**
 * The template plan for a set of findings: each distinct control's steps (in first-seen order),
 * then one step naming the places to change; risk is the highest severity, effort the largest
 * template effort.
 */
export function templatePlan(findings: readonly PlanFinding[]): RemediationPlan & {
  title: string;
} {
  const keys = [...new Set(findings.map((f) => f.control_key))];
  const templates = keys.map((k) => REMEDIATION_TEMPLATES[k] ?? GENERIC);
  const steps = templates.flatMap((t) => t.steps);
  const places = findings
    .flatMap((f) => f.locations.map((l) => `${l.path}:${l.start_line}`))
    .filter((p, i, all) => all.indexOf(p) === i);
  if (places.length > 0)
    steps.push({
      title: 'Change these places',
      detail:
        places.slice(0, MAX_LOCATIONS).join(', ') + (places.length > MAX_LOCATIONS ? ', ...' : ''),
    });
  steps.push({
    title: 'Confirm with an audit',
    detail:
      'Mark the remediation done, then run an audit of the whole repository: it verifies that the findings are resolved.',
  });
  const risk = findings
    .map((f) => RISK_OF[f.severity])
    .reduce(
      (a, b) => (RISK_ORDER.indexOf(b) > RISK_ORDER.indexOf(a) ? b : a),
      'low' as RemediationRisk,
    );
  const effort = templates
    .map((t) => t.effort)
    .reduce(
      (a, b) => (EFFORT_ORDER.indexOf(b) > EFFORT_ORDER.indexOf(a) ? b : a),
      'small' as RemediationEffort,
    );
  const entityKeys = [...new Set(findings.flatMap((f) => (f.entity_key ? [f.entity_key] : [])))];
  const first = findings[0];
  return {
    title:
      findings.length === 1 && first
        ? `Remediate: ${first.title}`.slice(0, 500)
        : `Remediate ${findings.length} findings (${keys.join(', ')})`.slice(0, 500),
    summary: templates.map((t) => t.goal).join(' '),
    steps,
    affected_entity_keys: entityKeys,
    risk,
    effort,
  };
}
