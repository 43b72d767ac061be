// `npm run test:faults`: the fault suite (test/faults), kept out of `npm test`. Each file injects
// one fault into a running stack; one file at a time, so the faults never overlap.
export default {
  extensions: { ts: 'commonjs' },
  nodeArguments: ['--import=tsx'],
  files: ['test/faults/**/*.test.ts'],
  timeout: '5m',
  workerThreads: false,
  concurrency: 2,
};
