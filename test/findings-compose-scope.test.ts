/**
 * The container controls on the effective compose project (issue 30): an override fragment (a
 * service with neither image nor build, completed by another compose file) is judged once, where
 * the service is declared; test compose files start throwaway containers and are out of scope,
 * with the reason in the applicability. A case that must pass and one that must fail per rule.
 */
import test from 'ava';
import { assessFiles, control } from './helpers/assess-files';

const LIMITS = 'containers-resource-limits';
const PRIVILEGED = 'containers-not-privileged';
const SECRETS = 'no-committed-secrets';

const base =
  'services:\n  cart:\n    image: cart:1.0\n    deploy:\n      resources:\n        limits:\n          memory: 100M\n';
const fragment =
  'services:\n  cart:\n    depends_on:\n      - redis\n    environment:\n      - MODE=full\n';

test('an override fragment inherits the limits of its declaration: pass, and said', async (t) => {
  const list = await assessFiles({ 'compose.yaml': base, 'compose.full.yaml': fragment });
  const a = control(list, LIMITS);
  t.is(a.status, 'pass', a.rationale);
  t.deepEqual(a.findings, []);
  t.regex(a.applicability_rationale, /compose\.full\.yaml service:cart \(an override merged/);
});

test('a declaration without limits fails once, at the declaration, not at its fragment', async (t) => {
  const list = await assessFiles({
    'compose.yaml': 'services:\n  cart:\n    image: cart:1.0\n',
    'compose.full.yaml': fragment,
  });
  const a = control(list, LIMITS);
  t.is(a.status, 'fail');
  t.deepEqual(
    a.findings.map((f) => f.location?.path),
    ['compose.yaml'],
  );
  // A service with neither image nor build that nothing completes is judged as it stands.
  const alone = control(await assessFiles({ 'compose.yaml': fragment }), LIMITS);
  t.is(alone.status, 'fail');
});

test('test compose files are out of scope for privileged, limits and secrets, with the reason', async (t) => {
  const testFile =
    'services:\n  sut:\n    image: sut:1.0\n    privileged: true\n    environment:\n      - POSTGRES_PASSWORD=postgres\n';
  const list = await assessFiles({
    'compose.yaml': base,
    'compose.tests.yaml': testFile,
    'result/docker-compose.test.yml': testFile,
    'e2e/docker-compose.yml': testFile,
  });
  for (const key of [LIMITS, PRIVILEGED, SECRETS]) {
    const a = control(list, key);
    t.deepEqual(a.findings, [], key);
    t.not(a.status, 'fail', key);
  }
  t.regex(
    control(list, LIMITS).applicability_rationale,
    /compose\.tests\.yaml \(a test compose file\)/,
  );
  t.regex(
    control(list, PRIVILEGED).applicability_rationale,
    /e2e\/docker-compose\.yml \(a test compose file\)/,
  );
  t.regex(
    control(list, SECRETS).applicability_rationale,
    /test files, not applicable: .*result\/docker-compose\.test\.yml/,
  );
});

test('a deployed compose variant is judged: privileged, no limits and a literal password fail', async (t) => {
  const list = await assessFiles({
    'docker-compose.prod.yml':
      'services:\n  agent:\n    image: agent:1.0\n    privileged: true\n    environment:\n      - POSTGRES_PASSWORD=s3cr3t-Pa55\n',
  });
  for (const key of [LIMITS, PRIVILEGED, SECRETS]) {
    const a = control(list, key);
    t.is(a.status, 'fail', key);
    t.deepEqual(
      a.findings.map((f) => f.location?.path),
      ['docker-compose.prod.yml'],
      key,
    );
  }
});
