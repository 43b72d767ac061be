/**
 * The layer boundaries hold: ESLint (the same configuration `npm run lint` uses) refuses an import
 * that crosses a boundary, and table access outside db/. Each case is linted as if it were a file
 * at that path, so a rule that stopped matching would fail here, not only in review.
 */
import test from 'ava';
import path from 'node:path';
import { ESLint } from 'eslint';
import * as workflows from '../workflows';
import { WORKFLOW_TYPES } from '../domain/contract/workflows';

const ROOT = path.resolve(__dirname, '..');
// The probes are not files of the project, so they are linted without type information (the
// boundary rules need none); the rules that do need it are off for them.
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [
    {
      languageOptions: { parserOptions: { projectService: false } },
      rules: {
        '@typescript-eslint/no-floating-promises': 'off',
        '@typescript-eslint/no-misused-promises': 'off',
      },
    },
  ],
});

async function ruleIds(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  const fatal = result?.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`${file}: ${fatal.message}`);
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => `${m.ruleId}: ${m.message}`);
}

const refused: Array<[file: string, code: string, why: string]> = [
  [
    'domain/contract/probe.ts',
    "import { Type } from '@sinclair/typebox';\nexport const x = Type;\n",
    'contract imports no package',
  ],
  [
    'domain/contract/probe.ts',
    "import { x } from '../audits/classify';\nexport const y = x;\n",
    'contract imports no other domain module',
  ],
  [
    'domain/audits/probe.ts',
    "import { insertAudit } from '../../db/audits';\nexport const y = insertAudit;\n",
    'domain imports no db',
  ],
  [
    'domain/probe.ts',
    "import { OPERATIONS } from '../api/operations';\nexport const y = OPERATIONS;\n",
    'domain imports no api',
  ],
  [
    'domain/probe.ts',
    "import type { Knex } from 'knex';\nexport type K = Knex;\n",
    'no I/O library in domain',
  ],
  [
    'workflows/probe.ts',
    "import { createAuditActivities } from '../activities/audits';\nexport const y = createAuditActivities;\n",
    'workflows import activity types only',
  ],
  [
    'workflows/probe.ts',
    "import { insertAudit } from '../db/audits';\nexport const y = insertAudit;\n",
    'no db in workflows',
  ],
  [
    'api/audits/probe.ts',
    "import { createAuditActivities } from '../../activities/audits';\nexport const y = createAuditActivities;\n",
    'api imports no activities',
  ],
  [
    'activities/audits/probe.ts',
    "import { OPERATIONS } from '../../api/operations';\nexport const y = OPERATIONS;\n",
    'activities import no api',
  ],
  [
    'activities/schedules/probe.ts',
    "import { ScheduleWorkflow } from '../../workflows/schedules';\nexport const y = ScheduleWorkflow;\n",
    'activities import no workflows',
  ],
  [
    'db/probe.ts',
    "import { OPERATIONS } from '../api/operations';\nexport const y = OPERATIONS;\n",
    'db imports no api',
  ],
  [
    'analysis/probe.ts',
    "import { insertAudit } from '../db/audits';\nexport const y = insertAudit;\n",
    'analysis imports no db',
  ],
  [
    'api/audits/probe.ts',
    "import type { Knex } from 'knex';\nexport const count = (db: Knex) => db('audits').count();\n",
    'no table outside db/',
  ],
  [
    'activities/audits/probe.ts',
    "import type { Knex } from 'knex';\nexport const q = (trx: Knex) => trx.raw('select 1');\n",
    'no SQL outside db/',
  ],
  [
    'api/audits/probe.ts',
    "import type { Knex } from 'knex';\nexport const f = (q: Knex.QueryBuilder, id: string) => q.andWhere('audits.repository_id', id);\n",
    'no table-qualified column outside db/',
  ],
  [
    'activities/audits/probe.ts',
    "import type { Knex } from 'knex';\nexport const f = (q: Knex.QueryBuilder, s: string) => q.where({ 'audit_schedules.status': s });\n",
    'no table-qualified column key outside db/',
  ],
  [
    'api/audits/probe.ts',
    "import type { Knex } from 'knex';\nexport const f = (q: Knex.QueryBuilder) => q.orderBy([{ column: 'audits.created_at', order: 'desc' }]);\n",
    'no table-qualified orderBy column outside db/',
  ],
  [
    'cli/commands/probe.ts',
    "import { OPERATIONS } from '../../api/operations';\nexport const y = OPERATIONS;\n",
    'cli imports no api',
  ],
  [
    'cli/probe.ts',
    "import { findAudit } from '../db/audits';\nexport const y = findAudit;\n",
    'cli imports no db',
  ],
  [
    'cli/probe.ts',
    "import { Client } from '@temporalio/client';\nexport const y = Client;\n",
    'cli uses no workflow engine client',
  ],
];

for (const [file, code, why] of refused) {
  test(`lint refuses: ${why} (${file})`, async (t) => {
    const found = await ruleIds(file, code);
    t.true(found.length > 0, `expected a boundary error for ${file}`);
  });
}

const allowed: Array<[file: string, code: string, why: string]> = [
  [
    'domain/audits/probe.ts',
    "import { STAGE_KEYS } from '../contract/values';\nexport const y = STAGE_KEYS;\n",
    'domain uses the contract',
  ],
  [
    'workflows/probe.ts',
    "import type { AuditActivities } from '../activities/audits';\nexport type A = AuditActivities;\n",
    'workflows import activity types',
  ],
  [
    'api/audits/probe.ts',
    "import { insertAudit } from '../../db/audits';\nexport const y = insertAudit;\n",
    'api calls db stores',
  ],
  [
    'db/probe.ts',
    "import type { Knex } from 'knex';\nexport const count = (db: Knex) => db('audits').count();\n",
    'db names tables',
  ],
  [
    'db/probe.ts',
    "import type { Knex } from 'knex';\nexport const f = (q: Knex.QueryBuilder, id: string) => q.andWhere('audits.repository_id', id);\n",
    'db names table-qualified columns',
  ],
  [
    'activities/uncertainty/probe.ts',
    "export const write = { action: 'uncertainty_cases.observed', resourceType: 'architecture_snapshot' };\n",
    'an action name shaped like table.column is not a column',
  ],
  [
    'cli/commands/probe.ts',
    "import { STAGE_KEYS } from '../../domain/contract/values';\nimport type { paths } from '../generated/api';\nexport type P = paths;\nexport const y = STAGE_KEYS;\n",
    'cli uses the contract values and the generated types',
  ],
];

for (const [file, code, why] of allowed) {
  test(`lint allows: ${why} (${file})`, async (t) => {
    t.deepEqual(await ruleIds(file, code), []);
  });
}

test('every workflow type name is a workflow the worker registers', (t) => {
  const exported = Object.keys(workflows).sort();
  t.deepEqual(Object.values(WORKFLOW_TYPES).sort(), exported);
});
