/**
 * The code checkout this process runs from: the folder holding package.json. Modules run from
 * their TypeScript source (development, tests: `<root>/platform/`) or compiled (`npm start`,
 * `npm run api`, the image: `<root>/dist/app/platform/`), so the root is found by climbing to
 * the package.json of the package `archaudit` rather than by a fixed number of `..` (dist/app has
 * a package.json of its own: scripts/run.cjs).
 */
import fs from 'node:fs';
import path from 'node:path';

function packageName(file: string): string | null {
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name ?? null;
  } catch {
    return null;
  }
}

function codeDir(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (packageName(path.join(dir, 'package.json')) === 'archaudit') return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}

export const CODE_DIR = codeDir(__dirname);
