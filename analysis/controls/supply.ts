/** The supply-chain controls: no committed secrets, lockfiles present, images pinned. */
import { isSha256Digest } from '../shared/images';
import type { ControlSpec } from './catalog';
import { bool, ofKind, onEvidence, type Check, type Context } from './check';
import { composeScope } from './effective';
import { imagesToJudge, isSecretPlaceholder } from './placeholders';

function noCommittedSecrets(ctx: Context): Check[] {
  const secrets = ofKind(ctx, 'literal-secret').filter(
    (e) => !isSecretPlaceholder(e) && composeScope(e.location.path) === null,
  );
  if (secrets.length === 0) {
    if (ctx.evidence.length === 0 && ctx.files.length === 0) return [];
    return [
      {
        requirement: 'no-literal-secrets',
        verdict: 'pass',
        evidence_ids: [],
        facts: { literal_secrets: 0 },
        title: 'no literal secret found',
        subject: 'none',
        entity_key: null,
        location: null,
      },
    ];
  }
  return secrets.map((e) => {
    const variable = String(e.attributes.variable ?? e.attributes.name ?? '');
    return onEvidence(ctx, e, {
      requirement: 'no-literal-secrets',
      verdict: 'fail',
      title: `${e.location.path} commits a literal secret${variable ? ` in ${variable}` : ''}`,
      facts: { variable },
      discriminator: variable,
    });
  });
}

function lockfilePresent(ctx: Context): Check[] {
  return ofKind(ctx, 'unit-declared')
    .filter((e) => e.attributes.lockfile_present !== null) // null: no manifest, nothing to lock
    .map((e) => {
      const present = bool(e.attributes.lockfile_present);
      return onEvidence(ctx, e, {
        requirement: 'lockfile-committed',
        verdict: present === null ? 'unknown' : present ? 'pass' : 'fail',
        title: `${e.subject_key} ${present ? 'has' : present === false ? 'has no' : 'has an unknown'} lockfile`,
        facts: { lockfile_present: present },
      });
    });
}

function imagesPinned(ctx: Context): Check[] {
  const out: Check[] = [];
  for (const e of imagesToJudge(ctx).judged) {
    const a = e.attributes;
    const image = String(a.image ?? e.object_key ?? '');
    const digest = typeof a.digest === 'string' ? a.digest : null;
    const tag = typeof a.tag === 'string' ? a.tag : null;
    const unresolved = a.unresolved === true || (a.tag === undefined && a.digest === undefined);
    const latest = !unresolved && digest === null && (tag === null || tag === 'latest');
    const pinned = a.pinned === true || isSha256Digest(digest);
    out.push(
      onEvidence(ctx, e, {
        requirement: 'no-latest-tag',
        verdict: unresolved ? 'unknown' : latest ? 'fail' : 'pass',
        title: latest
          ? `${image} is referenced ${tag ? 'as latest' : 'without a tag'}`
          : `${image} carries an explicit tag or digest`,
        facts: { tag, digest, unresolved },
        discriminator: image,
      }),
      onEvidence(ctx, e, {
        requirement: 'digest-pinned',
        verdict: unresolved ? 'unknown' : pinned ? 'pass' : 'fail',
        title: `${image} is ${pinned ? '' : 'not '}pinned by digest`,
        facts: { pinned },
        discriminator: `${image}\u0000digest`,
      }),
    );
  }
  return out;
}

export const SUPPLY_CONTROLS: ControlSpec[] = [
  {
    control: {
      key: 'no-committed-secrets',
      title: 'No committed secrets',
      description: 'No secret-looking setting has a literal value committed to the repository.',
      domain: 'code',
      severity: 'high',
      requirements: [
        { key: 'no-literal-secrets', description: 'No literal-secret evidence was found.' },
      ],
    },
    evaluate: noCommittedSecrets,
    notApplicable: 'no files or evidence to scan',
  },
  {
    control: {
      key: 'lockfile-present',
      title: 'Dependency lockfile present',
      description: 'Every code unit with a package manifest commits a lockfile.',
      domain: 'code',
      severity: 'medium',
      requirements: [
        { key: 'lockfile-committed', description: 'Each unit with a manifest has a lockfile.' },
      ],
    },
    evaluate: lockfilePresent,
    notApplicable: 'no code unit with a package manifest found',
  },
  {
    control: {
      key: 'images-pinned',
      title: 'Container images pinned',
      description:
        'Image references carry an explicit tag other than latest; pinning by digest is best.',
      domain: 'cloud',
      severity: 'medium',
      requirements: [
        { key: 'no-latest-tag', description: 'No image is referenced without a tag or as latest.' },
        {
          key: 'digest-pinned',
          description: 'Images are pinned by sha256 digest (advisory).',
          advisory: true,
        },
      ],
    },
    evaluate: imagesPinned,
    notApplicable: 'no image reference found',
  },
];
