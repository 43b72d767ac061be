#!/usr/bin/env node
/**
 * Production runs compiled JavaScript, not TypeScript through a loader (docs/decisions.md,
 * "Compiled JavaScript at run time").
 *
 *   node scripts/run.cjs <entry> [args...]   e.g. `api/main`, `worker/main`, `scripts/admin`
 *   node scripts/run.cjs --build             only bring dist/app up to date
 *
 * dist/app mirrors the source folders: each `x.ts` becomes `dist/app/x.js` (CommonJS, one file per
 * module, by esbuild: the same per-file transform tsx applies in development and in the tests).
 * Only what is stale is built: a module whose output is missing or older than its source; outputs
 * whose source is gone are removed. The check stats each source and its output (a few ms). Then
 * the entry runs in this process (no child: signals reach it directly).
 *
 * Where there are no sources (the Docker image ships dist/ alone) or no esbuild (an install
 * without dev dependencies), what was built runs as it is. Plain JavaScript on purpose: it must
 * run before anything is built.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist', 'app');
/** The production source folders (tests and benchmarks keep running through tsx). */
const SOURCE_DIRS = [
  'activities',
  'analysis',
  'api',
  'cli',
  'db',
  'domain',
  'platform',
  'scripts',
  'worker',
  'workflows',
];
/** Files read at run time beside the module that reads them (cli/contract.ts). */
const ASSETS = ['cli/generated/openapi.json'];
/**
 * dist/app/package.json: CommonJS whatever the root says, and the version for the modules that
 * read `../package.json` (cli/main.ts). Its own name: platform/code-dir.ts climbs past it.
 */
const APP_PACKAGE = path.join(OUT, 'package.json');
const LOCK = path.join(ROOT, 'dist', '.app-build.lock');

function walk(dir, rel, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) walk(path.join(dir, e.name), r, out);
    else if (e.isFile()) out.push(r);
  }
  return out;
}

/** Source modules (relative paths), `.d.ts` left out. */
function sourceModules() {
  return SOURCE_DIRS.flatMap((d) =>
    walk(path.join(ROOT, d), d, []).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
  );
}

const outputOf = (rel) => path.join(OUT, rel.replace(/\.ts$/, '.js'));

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** One build at a time across processes (tests and `npm start` may start together). */
function withLock(fn) {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock older than two minutes belongs to a build that died.
      if (Date.now() - mtime(LOCK) > 120_000 || Date.now() > deadline) {
        fs.rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      sleep(100);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/** What is stale: modules to transform, assets to copy, outputs whose source is gone. */
function staleness(force) {
  const modules = sourceModules();
  const assets = ASSETS.filter((a) => fs.existsSync(path.join(ROOT, a)));
  const wanted = new Set(modules.map((m) => outputOf(m)));
  for (const m of modules) wanted.add(`${outputOf(m)}.map`);
  for (const a of assets) wanted.add(path.join(OUT, a));
  wanted.add(APP_PACKAGE);
  const changed = (rel, out) => force || mtime(out) < mtime(path.join(ROOT, rel));
  return {
    modules: modules.filter((m) => changed(m, outputOf(m))),
    assets: [
      ...assets.filter((a) => changed(a, path.join(OUT, a))),
      ...(changed('package.json', APP_PACKAGE) ? ['package.json'] : []),
    ],
    orphans: walk(OUT, '', [])
      .map((f) => path.join(OUT, f))
      .filter((f) => !wanted.has(f)),
    total: modules.length,
  };
}

/**
 * Brings dist/app up to date; returns how many modules were built. `force` rebuilds them all.
 * Messages go to stderr: stdout belongs to the command (`npm run --silent openapi > file`).
 */
function ensureBuilt({ force = false } = {}) {
  if (sourceModules().length === 0) return 0; // no sources here: run what was shipped
  const first = staleness(force);
  if (first.modules.length + first.assets.length + first.orphans.length === 0) return 0;
  let esbuild;
  try {
    esbuild = require('esbuild');
  } catch {
    if (fs.existsSync(OUT)) {
      process.stderr.write('archaudit: esbuild is not installed; running dist/app as built.\n');
      return 0;
    }
    throw new Error('dist/app is not built and esbuild is missing: run `npm install` first.');
  }
  return withLock(() => {
    // Another process may have built it while this one waited for the lock.
    const s = staleness(force);
    if (s.modules.length > 0) {
      esbuild.buildSync({
        entryPoints: s.modules.map((m) => path.join(ROOT, m)),
        outdir: OUT,
        outbase: ROOT,
        bundle: false,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        sourcemap: 'linked',
        logLevel: 'warning',
      });
    }
    for (const a of s.assets) {
      if (a === 'package.json') {
        const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, a), 'utf8'));
        const app = { name: 'archaudit-app', version, private: true, type: 'commonjs' };
        fs.mkdirSync(OUT, { recursive: true });
        fs.writeFileSync(APP_PACKAGE, `${JSON.stringify(app, null, 2)}\n`);
        continue;
      }
      fs.mkdirSync(path.dirname(path.join(OUT, a)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, a), path.join(OUT, a));
    }
    for (const f of s.orphans) fs.rmSync(f, { force: true });
    if (s.modules.length > 0) {
      process.stderr.write(
        `archaudit: built ${s.modules.length} of ${s.total} modules into dist/app\n`,
      );
    }
    return s.modules.length;
  });
}

/** Runs the built `entry` (e.g. `api/main`) in this process with `args`. */
function runEntry(entry, args) {
  const file = path.join(OUT, `${entry.replace(/\.(ts|js)$/, '')}.js`);
  if (!fs.existsSync(file)) throw new Error(`no built module ${path.relative(ROOT, file)}`);
  process.argv = [process.argv[0], file, ...args];
  return require(file);
}

module.exports = { ensureBuilt, runEntry, OUT };

if (require.main === module) {
  const [entry, ...args] = process.argv.slice(2);
  try {
    if (!entry || entry === '--help') {
      process.stderr.write('usage: node scripts/run.cjs <entry> [args...] | --build\n');
      process.exitCode = 2;
    } else if (entry === '--build') {
      const n = ensureBuilt({ force: args.includes('--force') });
      if (n === 0) process.stderr.write('archaudit: dist/app is up to date\n');
    } else {
      ensureBuilt();
    }
  } catch (err) {
    process.stderr.write(`archaudit: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (entry && entry !== '--help' && entry !== '--build') runEntry(entry, args);
}
