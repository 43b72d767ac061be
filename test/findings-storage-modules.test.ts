/**
 * storage-encrypted-at-rest on registry modules (issue 30, item 2): a call of a public module
 * that wraps one storage resource is read as that resource, the module's own defaults under the
 * call's inputs; a case that must fail and one that must pass.
 */
import test from 'ava';
import { assessFiles, control } from './helpers/assess-files';

const KEY = 'storage-encrypted-at-rest';

test('a module call left at a default that does not encrypt fails, at the call', async (t) => {
  const a = control(
    await assessFiles({
      'infra/cache.tf': `module "session_cache" {
  source  = "cloudposse/elasticache-redis/aws"
  version = "0.53.0"
  name    = "\${var.env}-sessions"
  transit_encryption_enabled = false
}
`,
    }),
    KEY,
  );
  t.is(a.status, 'fail');
  t.is(a.findings.length, 1);
  t.is(a.findings[0]?.location?.path, 'infra/cache.tf');
  t.regex(a.findings[0]?.title ?? '', /module\.session_cache is not encrypted at rest/);
});

test('module calls that encrypt, by input or by the module default, pass', async (t) => {
  const assessed = await assessFiles({
    'infra/cache.tf': `module "session_cache" {
  source  = "cloudposse/elasticache-redis/aws"
  at_rest_encryption_enabled = true
}
`,
    'infra/db.tf': `module "orders_db" {
  source  = "terraform-aws-modules/rds-aurora/aws"
  version = "9.0.0"
  engine  = "aurora-postgresql"
}
`,
  });
  const a = control(assessed, KEY);
  t.is(a.status, 'pass', a.rationale);
  t.deepEqual(a.findings, []);
  t.is(a.requirements[0]?.rationale, 'all 2 checked subject(s) comply');
});
