/**
 * `npm run build:cli`: the `archaudit` CLI as one JavaScript file for Node 20 (no tsx, no
 * node_modules: commander, openapi-fetch, listr2, tar-stream, ignore and the contract are inside)
 * in dist/cli/, with its own package.json, then `npm pack` of that folder:
 * dist/archaudit-cli-<version>.tgz. Installed from that file (`npm install -g ./archaudit-cli-*.tgz`,
 * or the copy the API serves at /cli/archaudit-cli.tgz), never from a public registry.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.join(__dirname, '..');
const out = path.join(root, 'dist', 'cli');

export const CLI_PACKAGE_NAME = 'archaudit-cli';

const VALIDATOR = /^@seriousme\/openapi-schema-validator$/;

async function main(): Promise<void> {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const result = await build({
    stdin: {
      contents: "require('./main.ts').run(process.argv);",
      resolveDir: path.join(root, 'cli'),
      sourcefile: 'archaudit-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: path.join(out, 'archaudit.cjs'),
    // The OpenAPI validator (`contract check`) reads its JSON Schemas beside itself through
    // import.meta.url: in the bundle that is the bin's own folder, where they are copied.
    banner: {
      js: "#!/usr/bin/env node\nconst __archauditUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    define: { 'import.meta.url': '__archauditUrl' },
    minify: true,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning',
    // The contract validator (ajv, yaml: half the bundle) is its own file, read only by
    // `contract check`: `--help` and every other command do not parse it (bench:cli).
    plugins: [
      {
        name: 'validator-apart',
        setup(b) {
          // A CommonJS shim bundled in its place requires the file at run time (Node's import()
          // of a minified CommonJS file would not see its named exports).
          b.onResolve({ filter: VALIDATOR }, () => ({ path: 'validator', namespace: 'apart' }));
          b.onLoad({ filter: /.*/, namespace: 'apart' }, () => ({
            contents: "module.exports = require('./validator.cjs');",
            loader: 'js',
          }));
          b.onResolve({ filter: /^\.\/validator\.cjs$/ }, (a) => ({
            path: a.path,
            external: true,
          }));
        },
      },
    ],
  });
  const validator = await build({
    stdin: {
      contents: "module.exports = require('@seriousme/openapi-schema-validator');",
      resolveDir: path.join(root, 'cli'),
      sourcefile: 'validator-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: path.join(out, 'validator.cjs'),
    banner: {
      js: "const __archauditUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    define: { 'import.meta.url': '__archauditUrl' },
    minify: true,
    legalComments: 'eof',
    metafile: true,
    logLevel: 'warning',
  });
  fs.chmodSync(path.join(out, 'archaudit.cjs'), 0o755);
  fs.cpSync(
    path.join(root, 'node_modules', '@seriousme', 'openapi-schema-validator', 'schemas'),
    path.join(out, 'schemas'),
    { recursive: true, filter: (src) => !src.endsWith('.md') },
  );
  // The contract stays a file beside the bin, read only by the commands that need it.
  fs.mkdirSync(path.join(out, 'generated'));
  fs.copyFileSync(
    path.join(root, 'cli', 'generated', 'openapi.json'),
    path.join(out, 'generated', 'openapi.json'),
  );
  fs.writeFileSync(
    path.join(out, 'package.json'),
    `${JSON.stringify(
      {
        name: CLI_PACKAGE_NAME,
        version,
        description: 'Command-line client of the archaudit API (bundled; no dependencies).',
        license: 'UNLICENSED',
        // Installed from its tarball only: never published to a public registry.
        private: true,
        engines: { node: '>=20' },
        bin: { archaudit: 'archaudit.cjs' },
        files: ['archaudit.cjs', 'validator.cjs', 'generated/openapi.json', 'schemas'],
      },
      null,
      2,
    )}\n`,
  );
  const packed = execFileSync(
    'npm',
    ['pack', '--silent', '--pack-destination', path.join(root, 'dist'), out],
    { cwd: root, encoding: 'utf8' },
  ).trim();
  const tarball = path.join(root, 'dist', packed.split('\n').pop()!);
  // A stable name besides the versioned one: what the API serves and the recipes fetch.
  fs.copyFileSync(tarball, path.join(root, 'dist', `${CLI_PACKAGE_NAME}.tgz`));
  const bytes = [result, validator]
    .flatMap((r) => Object.values(r.metafile.outputs))
    .reduce((n, o) => n + o.bytes, 0);
  console.log(`archaudit CLI: ${path.join(out, 'archaudit.cjs')} (${bytes} bytes); ${tarball}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
