#!/usr/bin/env node
// The `archaudit` command: runs the TypeScript CLI through tsx, as the repository runs everything.
require('tsx/cjs/api').register();
require('./main.ts').run(process.argv);
