/**
 * `npm run build:console`: builds the web console (console/, Vite) into dist/console when its
 * sources changed since the last build (a SHA-256 of console/, the generated contract types and
 * the lock file, kept in dist/console/.stamp), then writes a Brotli and a gzip copy of each text
 * file for the API to send. `npm install` (prepare), `npm start` and `npm test` run it.
 * `--if-possible`: a machine without the build tools (an install without dev dependencies)
 * skips with a note instead of failing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { CONSOLE_DIR } from '../api/console/static';
import { CODE_DIR } from '../platform/code-dir';

const ROOT = CODE_DIR;
const SOURCE = path.join(ROOT, 'console');
const INPUTS = [
  path.join(ROOT, 'cli', 'generated', 'api.d.ts'),
  path.join(ROOT, 'package-lock.json'),
];
const STAMP = path.join(CONSOLE_DIR, '.stamp');

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) =>
      d.isDirectory() ? filesUnder(path.join(dir, d.name)) : [path.join(dir, d.name)],
    )
    .sort();
}

/** The SHA-256 over every input's path and bytes. */
function sourceDigest(): string {
  const hash = crypto.createHash('sha256');
  for (const file of [...filesUnder(SOURCE), ...INPUTS]) {
    hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function compress(): void {
  for (const file of filesUnder(CONSOLE_DIR)) {
    if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
    const data = fs.readFileSync(file);
    fs.writeFileSync(
      `${file}.br`,
      zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(data, { level: 9 }));
  }
}

/** Builds the console unless the build in dist/console is of the current sources. */
export async function ensureConsoleBuilt(
  options: { ifPossible?: boolean; say?: (line: string) => void } = {},
): Promise<'fresh' | 'built' | 'skipped'> {
  const say = options.say ?? ((line: string) => process.stdout.write(`${line}\n`));
  const digest = sourceDigest();
  const index = path.join(CONSOLE_DIR, 'index.html');
  if (fs.existsSync(index) && fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === digest)
    return 'fresh';
  let vite: { build(config: { configFile: string; logLevel: 'warn' }): Promise<unknown> };
  try {
    vite = (await import('vite')) as typeof vite;
  } catch (err) {
    if (!options.ifPossible) throw err;
    say('Console not built: Vite is not installed (an install without dev dependencies).');
    return 'skipped';
  }
  say('Building the console...');
  await vite.build({
    configFile: path.join(SOURCE, 'vite.config.mts'),
    logLevel: 'warn',
  });
  compress();
  fs.writeFileSync(STAMP, digest);
  return 'built';
}

if (require.main === module) {
  ensureConsoleBuilt({ ifPossible: process.argv.includes('--if-possible') }).then(
    (result) => {
      if (result === 'fresh') process.stdout.write('Console is up to date.\n');
    },
    (err: unknown) => {
      process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
      process.exit(1);
    },
  );
}
