// Lint rules: type-aware checks everywhere, and a ban on I/O in workflow code (determinism).
import fs from 'node:fs';
import path from 'node:path';
import tseslint from 'typescript-eslint';
import consoleRules from './console/eslint.config.mjs';

const nodeBuiltins = [
  'fs',
  'fs/promises',
  'path',
  'os',
  'child_process',
  'net',
  'http',
  'https',
  'crypto',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'process',
  'timers',
  'stream',
];

// Layer boundaries. A relative import that climbs out of a folder and into another top-level
// folder names that folder first: `../../db/audits` from api/audits/operations.ts.
const into = (...folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;
const layer = (why, ...folders) => ({ regex: into(...folders), message: why });
// Raw table access: `db('audits')`, `trx('audits')`, `knex.raw(...)`, `.from('audits')`.
const TABLE_ACCESS = [
  {
    selector:
      "CallExpression[callee.type='Identifier'][callee.name=/^(db|trx|tx|knex|conn)$/][arguments.0.type='Literal']",
    message: 'Queries live in db/<feature>.ts: call a store function instead of naming a table.',
  },
  {
    selector:
      "CallExpression[callee.property.name=/^(raw|from|into|table)$/][arguments.0.type='Literal']",
    message: 'Queries live in db/<feature>.ts: call a store function instead of writing SQL here.',
  },
];
// The tables, as the migrations create them (`createTable('audits', ...)`).
const migrations = path.join(import.meta.dirname, 'db', 'migrations');
const TABLES = [
  ...new Set(
    fs
      .readdirSync(migrations)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        [
          ...fs
            .readFileSync(path.join(migrations, f), 'utf8')
            .matchAll(/createTable\(\s*'([a-z_]+)'/g),
        ].map((m) => m[1]),
      ),
  ),
];
if (TABLES.length === 0) throw new Error(`eslint.config.mjs: no createTable in ${migrations}`);
// A table-qualified column (`'audits.status'`, `'audits.*'`) handed to a query builder: as a call
// argument, an object key (`.where({ 'audits.status': s })`) or an orderBy `column`. Other strings
// of that form are not columns (the action `uncertainty_cases.observed` is a property value).
const QUALIFIED = `/^(${TABLES.join('|')})\\.([a-z_]+|\\*)$/`;
const QUALIFIED_COLUMN = [
  `CallExpression > Literal[value=${QUALIFIED}]`,
  `CallExpression > ArrayExpression > Literal[value=${QUALIFIED}]`,
  `Property > Literal.key[value=${QUALIFIED}]`,
  `Property[key.name='column'] > Literal.value[value=${QUALIFIED}]`,
].map((selector) => ({
  selector,
  message:
    'Queries live in db/<feature>.ts: pass a typed filter to a store function instead of naming a column.',
}));
export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      '.tools/**',
      '.test-data/**',
      // Built output (npm run build, build:cli; git-ignored).
      'dist/**',
      'eslint.config.mjs',
      // The console's own lint rules and build configuration (outside its TypeScript project).
      'console/eslint.config.mjs',
      'console/vite.config.mts',
      // Written by `npm run cli:generate` (openapi-typescript) from the registry.
      'cli/generated/**',
      // The launchers of the compiled code (CommonJS, outside the TypeScript project: they run
      // before anything is built).
      'cli/bin.cjs',
      'scripts/run.cjs',
      // Plain configuration (ava's), outside the TypeScript project.
      'test/faults/ava.config.mjs',
      'test/probe/ava.config.mjs',
      // Third-party files copied verbatim for the accuracy benchmark (bench/accuracy.ts).
    ],
  },
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...consoleRules,
  {
    // Tests poke at JSON documents whose shape they are checking; `any` is fine there.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The contract's value sets: every layer takes them from here, so they import nothing.
    files: ['domain/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', message: 'domain/contract imports nothing.' }] },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    ignores: ['domain/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'domain holds the rules: it takes stores as parameters and imports no layer above it.',
              'api',
              'db',
              'activities',
              'workflows',
              'platform',
              'worker',
              'scripts',
            ),
            {
              regex: '^(knex|pg|koa|@koa/.*|@temporalio/(client|worker|activity))$',
              message: 'No I/O in domain/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['analysis/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'analysis reads files it is given; it imports no service layer.',
              'api',
              'db',
              'activities',
              'workflows',
              'worker',
              'scripts',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'db/ is below the API and the workers.',
              'api',
              'activities',
              'workflows',
              'worker',
              'scripts',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['platform/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'platform is infrastructure: it imports no feature layer.',
              'api',
              'activities',
              'worker',
              'scripts',
            ),
            {
              ...layer(
                'platform may name a workflow type, never import workflow code.',
                'workflows',
              ),
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'Activities are called by workflows; they import neither the API nor workflow code.',
              'api',
              'workflows',
              'worker',
              'scripts',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'Handlers call domain services and db stores, never activities.',
              'activities',
              'worker',
              'scripts',
            ),
          ],
        },
      ],
    },
  },
  {
    // The CLI is a client of the published API: HTTP only, plus the generated contract types and
    // pure domain helpers (value sets, the token shape).
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer(
              'cli talks to the service over HTTP only: use the generated client, not the service code.',
              'api',
              'db',
              'activities',
              'workflows',
              'worker',
              'platform',
              'analysis',
              'scripts',
            ),
            {
              regex: '^(knex|pg|koa|@koa/.*|@temporalio/.*)$',
              message: 'cli talks to the service over HTTP only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Nothing outside db/ names a table (tests and benchmarks set up and inspect rows directly).
    files: [
      'api/**/*.ts',
      'activities/**/*.ts',
      'analysis/**/*.ts',
      'domain/**/*.ts',
      'platform/**/*.ts',
      'worker/**/*.ts',
      'workflows/**/*.ts',
      'scripts/**/*.ts',
    ],
    rules: { 'no-restricted-syntax': ['error', ...TABLE_ACCESS, ...QUALIFIED_COLUMN] },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins
            .flatMap((n) => [n, `node:${n}`])
            .map((name) => ({
              name,
              message: 'Workflow code must stay deterministic: do I/O in activities.',
            })),
          patterns: [
            { group: ['knex', 'pg'], message: 'No I/O modules in workflows.' },
            layer(
              'Workflows are deterministic: no I/O layer.',
              'api',
              'db',
              'platform',
              'analysis',
              'worker',
              'scripts',
            ),
            {
              ...layer('Workflows import activity types only (proxyActivities<T>).', 'activities'),
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
);
