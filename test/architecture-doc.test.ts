/**
 * docs/architecture.md stays true: every file or folder it names exists, and every path with a
 * placeholder (`api/<family>/operations.ts`) matches at least one file of the tree.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';

const ROOT = path.resolve(__dirname, '..');
const DOC = 'docs/architecture.md';

/** Every file and folder of the tree (relative, folders with a trailing slash). */
function tree(dir = ''): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    if (['node_modules', '.git', '.tools', '.data', '.test-data', 'dist'].includes(entry.name))
      return [];
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    return entry.isDirectory() ? [`${rel}/`, ...tree(rel)] : [rel];
  });
}

/** The code spans of a Markdown text that name a path: a folder (`x/`) or a file with an extension. */
export function namedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
  return [
    ...new Set(
      spans.filter(
        (s) =>
          !/\s/.test(s) &&
          !s.startsWith('/') &&
          (/^[\w.<>-]+(\/[\w.<>-]+)*\/$/.test(s) ||
            /^[\w.<>-]+(\/[\w.<>-]+)*\.(ts|md|mjs|json)$/.test(s)),
      ),
    ),
  ];
}

const placeholder = (p: string): RegExp =>
  new RegExp(
    '^' +
      p
        .split(/<[^>]+>/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]+') +
      '$',
  );

test('the path finder takes paths and placeholders, not commands, routes or identifiers', (t) => {
  t.deepEqual(
    namedPaths(
      'See `api/`, `platform/config.ts`, `api/<family>/operations.ts`, `README.md`, ' +
        '`npm run lint`, `POST /v1/x`, `createAudit`, `patched()`, `knex`/`pg`, `bench:*`.',
    ),
    ['api/', 'platform/config.ts', 'api/<family>/operations.ts', 'README.md'],
  );
  t.true(placeholder('api/<family>/operations.ts').test('api/audits/operations.ts'));
  t.false(placeholder('api/<family>/operations.ts').test('api/audits/x/operations.ts'));
});

test('every path docs/architecture.md names exists', (t) => {
  const files = tree();
  const have = new Set(files);
  const named = namedPaths(fs.readFileSync(path.join(ROOT, DOC), 'utf8'));
  t.true(named.length >= 30, `${named.length} paths named`);
  // A bare file name (a folder's `index.ts`) must be the name of some file of the tree.
  const exists = (p: string): boolean =>
    p.includes('<')
      ? files.some((f) => placeholder(p).test(f))
      : p.includes('/')
        ? have.has(p)
        : have.has(p) || files.some((f) => f.endsWith(`/${p}`));
  const missing = named.filter((p) => !exists(p));
  t.deepEqual(missing, [], `${DOC} names paths that do not exist: correct the document`);
});
