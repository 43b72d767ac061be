/** The storage controls: datastores not public, storage encrypted at rest. */
import { keyKind } from '../evidence';
import { compareStrings } from '../shared/text';
import { isRecord } from '../shared/values';
import type { StoredEvidence } from '../reconcile';
import type { ControlSpec } from './catalog';
import { bool, onEvidence, type Check, type Context } from './check';

const STORAGE_KINDS = new Set(['datastore', 'queue', 'bucket']);

function security(e: StoredEvidence): Record<string, unknown> | null {
  return isRecord(e.attributes.security) ? e.attributes.security : null;
}

function datastoresNotPublic(ctx: Context): Check[] {
  const out: Check[] = [];
  const declared = ctx.evidence.filter(
    (e) =>
      e.evidence_kind === `${keyKind(e.subject_key)}-declared` &&
      STORAGE_KINDS.has(keyKind(e.subject_key)),
  );
  // Exposures by subject: one pass, not one scan of all evidence per datastore.
  const exposuresOf = new Map<string, StoredEvidence[]>();
  for (const x of ctx.evidence) {
    if (x.evidence_kind !== 'port-exposed' && x.evidence_kind !== 'service-exposed') continue;
    const list = exposuresOf.get(x.subject_key);
    if (list) list.push(x);
    else exposuresOf.set(x.subject_key, [x]);
  }
  for (const e of declared) {
    if (e.provider === 'terraform') {
      const p = bool(security(e)?.publicly_accessible);
      out.push(
        onEvidence(ctx, e, {
          requirement: 'not-publicly-accessible',
          verdict: p === null ? 'unknown' : p ? 'fail' : 'pass',
          title: `${e.subject_key} is ${p ? 'publicly accessible' : p === false ? 'not publicly accessible' : 'of unknown exposure'}`,
          facts: { publicly_accessible: p },
        }),
      );
      continue;
    }
    // compose / Kubernetes: the datastore's service publishes a public port?
    const svc = typeof e.attributes.service_key === 'string' ? e.attributes.service_key : null;
    const exposures = [
      ...new Set([
        ...(svc === null ? [] : (exposuresOf.get(svc) ?? [])),
        ...(exposuresOf.get(e.subject_key) ?? []),
      ]),
    ].filter((x) => x.provider === e.provider);
    const pub = exposures.filter((x) => x.attributes.public === true);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'not-publicly-accessible',
        verdict: pub.length > 0 ? 'fail' : 'pass',
        title:
          pub.length > 0
            ? `${e.subject_key} is published on a public port`
            : `${e.subject_key} is not published publicly`,
        facts: { public_exposures: pub.length },
        extra: exposures.map((x) => x.id),
      }),
    );
  }
  return out;
}

/**
 * Terraform storage records: a datastore, queue or bucket's declaration or a companion's settings,
 * and the declaration of a resource that names no entity (a registry module's call, a reusable
 * module's `this`), keyed `resource:<address>`.
 */
function isTerraformStorage(e: StoredEvidence): boolean {
  if (e.provider !== 'terraform') return false;
  const kind = keyKind(e.subject_key);
  const declares = /^(datastore|queue|bucket)-declared$/.test(e.evidence_kind);
  // A module's template stamped out per call is judged on its instances (their records).
  if (kind === 'resource') return declares && e.attributes.instantiated !== true;
  if (!STORAGE_KINDS.has(kind)) return false;
  return e.evidence_kind === `${kind}-declared` || e.evidence_kind === 'security-configured';
}

function storageEncrypted(ctx: Context): Check[] {
  const bySubject = new Map<string, StoredEvidence[]>();
  for (const e of ctx.evidence) {
    if (!isTerraformStorage(e)) continue;
    const list = bySubject.get(e.subject_key) ?? [];
    list.push(e);
    bySubject.set(e.subject_key, list);
  }
  const out: Check[] = [];
  for (const [key, list] of [...bySubject].sort((a, b) => compareStrings(a[0], b[0]))) {
    const decl = list.find((e) => e.evidence_kind !== 'security-configured');
    if (!decl) continue;
    const values = list
      .map((e) => bool(security(e)?.encryption_at_rest))
      .filter((v): v is boolean => v !== null);
    // A companion resource (e.g. a server-side encryption configuration) can enable it.
    const enc = values.includes(true) ? true : values.includes(false) ? false : null;
    // A record that names no entity is named by its Terraform address (`module.cache`).
    const address = decl.attributes.address;
    const name =
      keyKind(key) === 'resource' && typeof address === 'string' ? `Terraform ${address}` : key;
    out.push(
      onEvidence(ctx, decl, {
        requirement: 'encryption-at-rest',
        verdict: enc === null ? 'unknown' : enc ? 'pass' : 'fail',
        title: `${name} is ${enc ? 'encrypted at rest' : enc === false ? 'not encrypted at rest' : 'of unknown encryption'}`,
        facts: { encryption_at_rest: enc },
        extra: list.map((e) => e.id),
      }),
    );
  }
  return out;
}

export const STORAGE_CONTROLS: ControlSpec[] = [
  {
    control: {
      key: 'datastores-not-public',
      title: 'Datastores not publicly exposed',
      description:
        'No datastore, queue or bucket is publicly accessible (Terraform settings) or published on a public port (compose, Kubernetes NodePort/LoadBalancer).',
      domain: 'cloud',
      severity: 'high',
      requirements: [
        { key: 'not-publicly-accessible', description: 'No datastore is publicly reachable.' },
      ],
    },
    evaluate: datastoresNotPublic,
    notApplicable: 'no datastore, queue or bucket found',
  },
  {
    control: {
      key: 'storage-encrypted-at-rest',
      title: 'Storage encrypted at rest',
      description: 'Datastores, queues and buckets declared in Terraform are encrypted at rest.',
      domain: 'cloud',
      severity: 'medium',
      requirements: [
        {
          key: 'encryption-at-rest',
          description: 'Each storage resource enables encryption at rest.',
        },
      ],
    },
    evaluate: storageEncrypted,
    notApplicable: 'no Terraform datastore, queue or bucket found',
  },
];
