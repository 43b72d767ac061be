// `npm run test:probe`: issue 24's hostile probe (a 10,000-service compose file through the real
// worker, audited twice), kept out of `npm test` because it takes minutes (7.6 min at load ~27 on
// 2 cores) and a worker that ran out of memory must not take other tests down with it. CI runs it
// after the fault suite (.ci/run).
export default {
  extensions: { ts: 'commonjs' },
  nodeArguments: ['--import=tsx'],
  files: ['test/probe/**/*.test.ts'],
  timeout: '20m',
  workerThreads: false,
  concurrency: 1,
};
