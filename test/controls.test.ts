/** Control catalog assessment on hand-made evidence: pass/fail per control, fingerprints, determinism. */
import test from 'ava';
import {
  assessControls,
  CONTROL_CATALOG_VERSION,
  CONTROLS,
  type Assessment,
  type ControlInput,
} from '../analysis/controls';
import type { Entity, Relationship, StoredEvidence } from '../analysis/reconcile';

let n = 0;
function ev(
  fields: Partial<StoredEvidence> &
    Pick<StoredEvidence, 'evidence_kind' | 'subject_key'> & { path?: string; line?: number },
): StoredEvidence {
  n += 1;
  const { path, line, ...rest } = fields;
  return {
    id: `e${String(n).padStart(3, '0')}`,
    source_type: 'cloud',
    provider: 'docker-compose',
    relationship_kind: null,
    object_key: null,
    location: { path: path ?? 'x.yaml', start_line: line ?? 1, end_line: line ?? 1 },
    summary: 's',
    content_sha256: '0'.repeat(64),
    attributes: {},
    ...rest,
  };
}

function entity(key: string, ids: string[] = []): Entity {
  return {
    canonical_key: key,
    kind: key.slice(0, key.indexOf(':')),
    name: key.slice(key.indexOf(':') + 1),
    attributes: {},
    confidence: '0.80',
    evidence_ids: ids,
    sources: ['cloud'],
    contradictions: [],
  };
}

function rel(source: string, target: string, ids: string[]): Relationship {
  return {
    canonical_key: `calls:${source}->${target}`,
    source_key: source,
    target_key: target,
    kind: 'calls',
    attributes: {},
    confidence: '0.80',
    evidence_ids: ids,
    sources: ['code'],
    contradictions: [],
  };
}

const empty: ControlInput = { entities: [], relationships: [], evidence: [], files: [] };

function get(list: Assessment[], key: string): Assessment {
  const a = list.find((x) => x.control_key === key);
  if (!a) throw new Error(`no assessment ${key}`);
  return a;
}
const run = (input: Partial<ControlInput>) => assessControls({ ...empty, ...input });
const SHA = 'a'.repeat(40);
const GH = {
  source_type: 'cicd' as const,
  provider: 'github-actions',
  path: '.github/workflows/ci.yml',
};

test('catalog is versioned and covers at least 12 controls in four domains', (t) => {
  t.is(CONTROL_CATALOG_VERSION, '2026.11.3');
  t.true(CONTROLS.length >= 12);
  t.deepEqual([...new Set(CONTROLS.map((c) => c.domain))].sort(), [
    'architecture',
    'cicd',
    'cloud',
    'code',
  ]);
  const out = run({});
  t.deepEqual(
    out.map((a) => a.control_key),
    CONTROLS.map((c) => c.key).sort(),
  );
});

test('with nothing to look at, controls are not_applicable', (t) => {
  for (const a of run({})) {
    t.is(a.status, 'not_applicable', a.control_key);
    t.is(a.applicability, 'not_applicable');
    t.deepEqual(a.findings, []);
  }
});

test('ci-actions-pinned: sha pass, tag fail, first-party tag fine, local ignored', (t) => {
  const use = (uses: string, attrs: Record<string, unknown>, line = 5) =>
    ev({
      ...GH,
      line,
      evidence_kind: 'action-use',
      subject_key: 'job:github-actions/ci/build',
      relationship_kind: 'uses',
      object_key: `action:${uses.split('@')[0]}`,
      attributes: { uses, ...attrs },
    });
  const pass = run({
    evidence: [
      use(`docker/login-action@${SHA}`, { pin: 'sha', pinned: true, first_party: false }),
      use('actions/checkout@v4', { pin: 'tag', pinned: false, first_party: true }),
      use('./local', { pin: 'local', pinned: true, first_party: false }),
    ],
  });
  t.is(get(pass, 'ci-actions-pinned').status, 'pass');
  const bad = use('docker/login-action@v3', { pin: 'tag', pinned: false, first_party: false });
  const fail = get(run({ evidence: [bad] }), 'ci-actions-pinned');
  t.is(fail.status, 'fail');
  t.deepEqual(fail.failing_evidence_ids, [bad.id]);
  t.is(fail.findings.length, 1);
  t.is(fail.findings[0]?.location?.path, '.github/workflows/ci.yml');
  t.is(fail.requirements.find((r) => r.key === 'third-party-actions-sha-pinned')?.status, 'unmet');
  const unknown = get(
    run({ evidence: [use('x/y@v1', { first_party: false })] }),
    'ci-actions-pinned',
  );
  t.is(unknown.status, 'insufficient_evidence');
  t.is(unknown.confidence, '0.00');
});

test('ci-permissions-declared and ci-no-risky-triggers', (t) => {
  const pipe = (attrs: Record<string, unknown>) =>
    ev({
      ...GH,
      evidence_kind: 'pipeline-declared',
      subject_key: 'pipeline:github-actions/ci',
      attributes: attrs,
    });
  const job = (attrs: Record<string, unknown>) =>
    ev({
      ...GH,
      line: 8,
      evidence_kind: 'job-declared',
      subject_key: 'job:github-actions/ci/build',
      relationship_kind: 'part_of',
      object_key: 'pipeline:github-actions/ci',
      attributes: attrs,
    });
  const good = run({
    evidence: [
      pipe({ risky_triggers: [], permissions: { contents: 'read' }, permissions_declared: true }),
      job({ permissions: { contents: 'read' }, permissions_source: 'workflow', if: null }),
    ],
  });
  t.is(get(good, 'ci-permissions-declared').status, 'pass');
  t.is(get(good, 'ci-no-risky-triggers').status, 'pass');
  const bad = run({
    evidence: [
      pipe({
        risky_triggers: ['pull_request_target'],
        permissions: 'default',
        permissions_declared: false,
      }),
      job({ permissions: 'default', permissions_source: 'default', if: null }),
    ],
  });
  t.is(get(bad, 'ci-permissions-declared').status, 'fail');
  t.is(get(bad, 'ci-no-risky-triggers').status, 'fail');
  const writeAll = run({
    evidence: [
      pipe({ risky_triggers: ['workflow_run'] }),
      job({
        permissions: 'write-all',
        permissions_source: 'job',
        if: "github.event.workflow_run.conclusion == 'success'",
      }),
    ],
  });
  const perm = get(writeAll, 'ci-permissions-declared');
  t.is(perm.status, 'fail');
  t.is(perm.requirements.find((r) => r.key === 'permissions-declared')?.status, 'met');
  t.is(perm.requirements.find((r) => r.key === 'no-write-all')?.status, 'unmet');
  t.is(get(writeAll, 'ci-no-risky-triggers').status, 'pass');
  // GitLab jobs alone: the GitHub-specific controls do not apply.
  const gitlab = run({
    evidence: [
      ev({
        source_type: 'cicd',
        provider: 'gitlab-ci',
        evidence_kind: 'job-declared',
        subject_key: 'job:gitlab-ci/build',
      }),
    ],
  });
  t.is(get(gitlab, 'ci-permissions-declared').status, 'not_applicable');
  t.is(get(gitlab, 'ci-no-risky-triggers').status, 'not_applicable');
});

test('containers: privileged, resource limits, non-root (compose, kubernetes, Dockerfile)', (t) => {
  const compose = (attrs: Record<string, unknown>) =>
    ev({
      evidence_kind: 'service-declared',
      subject_key: 'service:api',
      path: 'docker-compose.yml',
      attributes: attrs,
    });
  const k8s = (c: Record<string, unknown>) =>
    ev({
      provider: 'kubernetes',
      evidence_kind: 'workload-declared',
      subject_key: 'service:web',
      path: 'k8s/web.yaml',
      attributes: { containers: [{ name: 'web', ...c }], init_containers: [] },
    });
  const good = run({
    evidence: [
      compose({ privileged: false, resource_limits_set: true, user: '1000' }),
      k8s({
        privileged: false,
        resource_limits_set: true,
        run_as_non_root: true,
        run_as_user: null,
      }),
      ev({
        provider: 'dockerfile',
        evidence_kind: 'user-declared',
        subject_key: 'service:api',
        path: 'Dockerfile',
        attributes: { user: 'app', runs_as_root: false },
      }),
    ],
  });
  t.is(get(good, 'containers-not-privileged').status, 'pass');
  t.is(get(good, 'containers-resource-limits').status, 'pass');
  t.is(get(good, 'containers-non-root').status, 'pass');
  t.is(get(good, 'containers-non-root').confidence, '0.95');
  const bad = run({
    evidence: [
      compose({ privileged: true, resource_limits_set: false, user: 'root' }),
      k8s({ privileged: true, resource_limits_set: false, run_as_non_root: null, run_as_user: 0 }),
      ev({
        provider: 'dockerfile',
        evidence_kind: 'runs-as-root',
        subject_key: 'service:api',
        path: 'Dockerfile',
        attributes: { user: null, reason: 'no USER instruction' },
      }),
    ],
  });
  for (const key of [
    'containers-not-privileged',
    'containers-resource-limits',
    'containers-non-root',
  ]) {
    const a = get(bad, key);
    t.is(a.status, 'fail', key);
    t.true(a.findings.length >= 2, key);
  }
  t.is(get(bad, 'containers-non-root').findings.length, 3);
  // Kubernetes container without runAsNonRoot next to a compliant Dockerfile: partial.
  const partial = run({
    evidence: [
      k8s({ run_as_non_root: null, run_as_user: null }),
      ev({
        provider: 'dockerfile',
        evidence_kind: 'user-declared',
        subject_key: 'service:web',
        path: 'Dockerfile',
        attributes: { user: 'app' },
      }),
    ],
  });
  const p = get(partial, 'containers-non-root');
  t.is(p.status, 'partial');
  t.is(p.confidence, '0.73');
});

test('datastores-not-public and storage-encrypted-at-rest', (t) => {
  const tf = (security: Record<string, unknown>) =>
    ev({
      provider: 'terraform',
      evidence_kind: 'datastore-declared',
      subject_key: 'datastore:orders',
      path: 'main.tf',
      attributes: { security },
    });
  const good = run({ evidence: [tf({ publicly_accessible: false, encryption_at_rest: true })] });
  t.is(get(good, 'datastores-not-public').status, 'pass');
  t.is(get(good, 'storage-encrypted-at-rest').status, 'pass');
  const bad = run({ evidence: [tf({ publicly_accessible: true, encryption_at_rest: false })] });
  t.is(get(bad, 'datastores-not-public').status, 'fail');
  t.is(get(bad, 'storage-encrypted-at-rest').status, 'fail');
  t.is(get(bad, 'storage-encrypted-at-rest').findings[0]?.entity_key, null);
  // A compose datastore published on a public port fails; only on loopback it passes.
  const store = ev({
    evidence_kind: 'datastore-declared',
    subject_key: 'datastore:redis',
    path: 'docker-compose.yml',
    attributes: { service_key: 'service:redis' },
  });
  const port = (pub: boolean) =>
    ev({
      evidence_kind: 'port-exposed',
      subject_key: 'service:redis',
      path: 'docker-compose.yml',
      line: 9,
      attributes: { public: pub },
    });
  const pubPort = port(true);
  const exposed = get(
    run({
      evidence: [store, pubPort],
      entities: [entity('datastore:redis', [store.id, pubPort.id])],
    }),
    'datastores-not-public',
  );
  t.is(exposed.status, 'fail');
  t.deepEqual(exposed.failing_evidence_ids, [store.id, pubPort.id].sort());
  t.is(exposed.findings[0]?.entity_key, 'datastore:redis');
  t.is(get(run({ evidence: [store, port(false)] }), 'datastores-not-public').status, 'pass');
  // Compose datastores: encryption is not something this control judges.
  t.is(get(run({ evidence: [store] }), 'storage-encrypted-at-rest').status, 'not_applicable');
});

test('no-committed-secrets and lockfile-present', (t) => {
  const unit = (present: boolean | null) =>
    ev({
      source_type: 'code',
      provider: 'npm',
      evidence_kind: 'unit-declared',
      subject_key: 'service:api',
      path: 'package.json',
      attributes: { lockfile_present: present },
    });
  const clean = run({ evidence: [unit(true)], files: ['package.json'] });
  t.is(get(clean, 'no-committed-secrets').status, 'pass');
  t.is(get(clean, 'lockfile-present').status, 'pass');
  const secret = ev({
    evidence_kind: 'literal-secret',
    subject_key: 'service:api',
    path: '.env',
    attributes: { variable: 'DB_PASSWORD' },
  });
  const dirty = run({ evidence: [unit(false), secret], files: ['package.json', '.env'] });
  t.is(get(dirty, 'no-committed-secrets').status, 'fail');
  t.deepEqual(get(dirty, 'no-committed-secrets').failing_evidence_ids, [secret.id]);
  t.is(get(dirty, 'lockfile-present').status, 'fail');
  // A unit without a manifest has nothing to lock.
  t.is(get(run({ evidence: [unit(null)] }), 'lockfile-present').status, 'not_applicable');
});

test('images-pinned: latest or missing tag fails, a tag passes, digest is advisory', (t) => {
  const img = (attrs: Record<string, unknown>) =>
    ev({
      evidence_kind: 'image-reference',
      subject_key: 'service:api',
      relationship_kind: 'uses_image',
      object_key: 'image:nginx',
      attributes: attrs,
    });
  const tagged = get(
    run({ evidence: [img({ image: 'nginx:1.27', tag: '1.27', digest: null, pinned: false })] }),
    'images-pinned',
  );
  t.is(tagged.status, 'pass');
  t.is(tagged.requirements.find((r) => r.key === 'digest-pinned')?.status, 'unmet');
  const digest = get(
    run({
      evidence: [
        img({
          image: 'nginx@sha256:' + 'b'.repeat(64),
          tag: null,
          digest: 'sha256:' + 'b'.repeat(64),
          pinned: true,
        }),
      ],
    }),
    'images-pinned',
  );
  t.is(digest.status, 'pass');
  t.is(digest.requirements.find((r) => r.key === 'digest-pinned')?.status, 'met');
  t.is(
    get(run({ evidence: [img({ image: 'nginx', tag: null, digest: null })] }), 'images-pinned')
      .status,
    'fail',
  );
  t.is(
    get(
      run({ evidence: [img({ image: 'nginx:latest', tag: 'latest', digest: null })] }),
      'images-pinned',
    ).status,
    'fail',
  );
  // A variable is decided at deploy time: not applicable, with the reason (issue 30).
  const variable = get(
    run({ evidence: [img({ image: '${IMG}', tag: null, digest: null, unresolved: true })] }),
    'images-pinned',
  );
  t.is(variable.status, 'not_applicable');
  t.regex(variable.applicability_rationale, /\$\{IMG\}: a variable set at deploy time/);
});

test('no-shared-database and no-service-dependency-cycle from the graph', (t) => {
  const e1 = ev({
    source_type: 'code',
    evidence_kind: 'connection',
    subject_key: 'service:a',
    path: 'a.ts',
    line: 3,
  });
  const e2 = ev({
    source_type: 'code',
    evidence_kind: 'connection',
    subject_key: 'service:b',
    path: 'b.ts',
    line: 4,
  });
  const entities = ['service:a', 'service:b', 'datastore:db'].map((k) => entity(k));
  const shared = run({
    entities,
    evidence: [e1, e2],
    relationships: [
      rel('service:a', 'datastore:db', [e1.id]),
      rel('service:b', 'datastore:db', [e2.id]),
    ],
  });
  const s = get(shared, 'no-shared-database');
  t.is(s.status, 'fail');
  t.is(s.findings[0]?.entity_key, 'datastore:db');
  t.deepEqual(s.findings[0]?.location, { path: 'a.ts', start_line: 3, end_line: 3 });
  t.is(get(shared, 'no-service-dependency-cycle').status, 'pass');
  const single = run({
    entities,
    relationships: [
      rel('service:a', 'datastore:db', [e1.id]),
      rel('service:a', 'service:b', [e2.id]),
    ],
  });
  t.is(get(single, 'no-shared-database').status, 'pass');
  t.is(get(single, 'no-service-dependency-cycle').status, 'pass');
  const cyc = run({
    entities,
    relationships: [rel('service:a', 'service:b', [e1.id]), rel('service:b', 'service:a', [e2.id])],
  });
  const c = get(cyc, 'no-service-dependency-cycle');
  t.is(c.status, 'fail');
  t.is(c.findings.length, 1);
  t.deepEqual(c.failing_evidence_ids, [e1.id, e2.id]);
  t.is(get(run({}), 'no-shared-database').status, 'not_applicable');
});

test('owners-declared looks for a CODEOWNERS file', (t) => {
  t.is(get(run({ files: ['.github/CODEOWNERS', 'src/a.ts'] }), 'owners-declared').status, 'pass');
  t.is(get(run({ files: ['CODEOWNERS'] }), 'owners-declared').status, 'pass');
  const fail = get(run({ files: ['src/a.ts', 'src/CODEOWNERS.md'] }), 'owners-declared');
  t.is(fail.status, 'fail');
  t.is(fail.findings.length, 1);
  t.is(get(run({}), 'owners-declared').status, 'not_applicable');
});

test('fingerprints survive shifted lines and new evidence ids; input_hash does not', (t) => {
  const make = (id: string, line: number) => ({
    ...ev({
      ...GH,
      line,
      evidence_kind: 'action-use',
      subject_key: 'job:github-actions/ci/build',
      object_key: 'action:docker/login-action',
      attributes: { uses: 'docker/login-action@v3', pin: 'tag', pinned: false, first_party: false },
    }),
    id,
  });
  const a = get(run({ evidence: [make('old-1', 10)] }), 'ci-actions-pinned');
  const b = get(run({ evidence: [make('new-9', 42)] }), 'ci-actions-pinned');
  t.is(a.findings[0]?.fingerprint, b.findings[0]?.fingerprint);
  t.regex(a.findings[0]?.fingerprint ?? '', /^[0-9a-f]{64}$/);
  t.is(b.findings[0]?.location?.start_line, 42);
  t.not(a.input_hash, b.input_hash);
  // Different control, same subject: different fingerprint.
  const other = get(run({ files: ['x'] }), 'owners-declared');
  t.not(other.findings[0]?.fingerprint, a.findings[0]?.fingerprint);
});

test('deterministic under shuffled input', (t) => {
  const evidence = [
    ev({
      evidence_kind: 'service-declared',
      subject_key: 'service:api',
      attributes: { privileged: true, resource_limits_set: false },
    }),
    ev({
      evidence_kind: 'service-declared',
      subject_key: 'service:web',
      path: 'b.yml',
      attributes: { privileged: false, resource_limits_set: true },
    }),
    ev({
      evidence_kind: 'literal-secret',
      subject_key: 'service:api',
      path: '.env',
      attributes: { variable: 'A_TOKEN' },
    }),
    ev({
      evidence_kind: 'literal-secret',
      subject_key: 'service:api',
      path: '.env',
      line: 2,
      attributes: { variable: 'B_TOKEN' },
    }),
    ev({
      evidence_kind: 'image-reference',
      subject_key: 'service:api',
      object_key: 'image:x',
      attributes: { image: 'x', tag: null, digest: null },
    }),
  ];
  const entities = [
    entity('service:a'),
    entity('service:b'),
    entity('service:c'),
    entity('datastore:db'),
  ];
  const relationships = [
    rel('service:a', 'service:b', [evidence[0]!.id]),
    rel('service:b', 'service:c', [evidence[1]!.id]),
    rel('service:c', 'service:a', [evidence[2]!.id]),
    rel('service:a', 'datastore:db', [evidence[3]!.id]),
    rel('service:c', 'datastore:db', [evidence[4]!.id]),
  ];
  const files = ['a', 'b', 'c'];
  const first = assessControls({ entities, relationships, evidence, files });
  const second = assessControls({
    entities: [...entities].reverse(),
    relationships: [
      relationships[3]!,
      relationships[0]!,
      relationships[4]!,
      relationships[2]!,
      relationships[1]!,
    ],
    evidence: [evidence[2]!, evidence[4]!, evidence[0]!, evidence[3]!, evidence[1]!],
    files: [...files].reverse(),
  });
  t.deepEqual(second, first);
  t.is(get(first, 'no-committed-secrets').findings.length, 2);
  t.is(get(first, 'no-service-dependency-cycle').status, 'fail');
  t.is(get(first, 'no-shared-database').status, 'fail');
  const failing = new Set(first.filter((a) => a.status === 'fail').map((a) => a.control_key));
  t.true(failing.size >= 6);
});

test('containers-non-root: a deployment the graph did not place still overrides its image by service key', (t) => {
  // A Dockerfile without USER, placed on service:assistant; a non-primary deployment variant of
  // the same service (not placed on any entity) sets runAsNonRoot: the image is not root there.
  const root = ev({
    source_type: 'cloud',
    provider: 'dockerfile',
    evidence_kind: 'runs-as-root',
    subject_key: 'service:assistant',
    path: 'src/assistant/Dockerfile',
  });
  const variant = (runAsNonRoot: boolean | null) =>
    ev({
      source_type: 'cloud',
      provider: 'kubernetes',
      evidence_kind: 'workload-declared',
      subject_key: 'service:assistant',
      path: 'kustomize/components/assistant/assistant.yaml',
      attributes: {
        containers: [{ name: 'server', repo: 'assistant', run_as_non_root: runAsNonRoot }],
      },
    });
  const pass = run({
    evidence: [root, variant(true)],
    entities: [entity('service:assistant', [root.id])],
  });
  t.is(get(pass, 'containers-non-root').status, 'pass');
  // The same variant setting nothing leaves the image's root in effect: it fails.
  const fail = run({
    evidence: [root, variant(null)],
    entities: [entity('service:assistant', [root.id])],
  });
  t.is(get(fail, 'containers-non-root').status, 'fail');
  t.deepEqual(
    get(fail, 'containers-non-root').findings.map((f) => f.location?.path),
    ['src/assistant/Dockerfile'],
  );
});
