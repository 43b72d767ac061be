// Lint rules: type-aware checks everywhere, and a ban on I/O in workflow code (determinism).
import tseslint from 'typescript-eslint';

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

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      '.tools/**',
      '.test-data/**',
      'eslint.config.mjs',
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
  {
    // Tests poke at JSON documents whose shape they are checking; `any` is fine there.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
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
            {
              group: ['../db/*', '../api/*', 'knex', 'pg'],
              message: 'No I/O modules in workflows.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
);
