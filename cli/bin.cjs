#!/usr/bin/env node
// The `archaudit` command in this checkout: the compiled CLI (dist/app/cli), built first when a
// source changed (scripts/run.cjs). Users install the bundled package instead (npm run build:cli).
const path = require('node:path');
const { ensureBuilt, OUT } = require('../scripts/run.cjs');

try {
  ensureBuilt();
} catch (err) {
  process.stderr.write(`archaudit: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
require(path.join(OUT, 'cli', 'main.js')).run(process.argv);
