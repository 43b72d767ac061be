/**
 * Packs a local folder as a tar.gz for createUpload, leaving out what git would: every
 * .gitignore on the way down applies to its folder (the `ignore` package reads git's syntax),
 * and .git itself. Symbolic links are left out (an upload may not point outside its root).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import ignore, { type Ignore } from 'ignore';
import { pack } from 'tar-stream';
import { CliError, EXIT } from './exit-codes';

interface Rules {
  /** The folder the rules are relative to, relative to the packed root ('' for the root). */
  base: string;
  rules: Ignore;
}

function ignored(rel: string, isDir: boolean, stack: Rules[]): boolean {
  return stack.some(({ base, rules }) => {
    const inner = base ? rel.slice(base.length + 1) : rel;
    return rules.ignores(isDir ? `${inner}/` : inner);
  });
}

/** Relative paths of the files to pack, in a stable order. */
export function filesToPack(root: string): { files: string[]; skippedLinks: number } {
  const files: string[] = [];
  let skippedLinks = 0;
  const walk = (rel: string, stack: Rules[]) => {
    const dir = path.join(root, rel);
    const gitignore = path.join(dir, '.gitignore');
    const here = fs.existsSync(gitignore)
      ? [...stack, { base: rel, rules: ignore().add(fs.readFileSync(gitignore, 'utf8')) }]
      : stack;
    const entries = fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git') continue;
      if (e.isSymbolicLink()) {
        skippedLinks += 1;
        continue;
      }
      if (ignored(child, e.isDirectory(), here)) continue;
      if (e.isDirectory()) walk(child, here);
      else if (e.isFile()) files.push(child);
    }
  };
  walk('', []);
  return { files, skippedLinks };
}

/** The tar.gz bytes of `root`'s files (see filesToPack). */
export async function packFolder(
  root: string,
): Promise<{ bytes: Buffer; files: number; skippedLinks: number }> {
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory())
    throw new CliError(`--path ${root} is not a folder.`, EXIT.usage);
  const { files, skippedLinks } = filesToPack(root);
  if (files.length === 0)
    throw new CliError(`--path ${root} holds no file to audit (after .gitignore).`, EXIT.usage);
  const p = pack();
  const chunks: Buffer[] = [];
  const done = pipeline(
    p,
    zlib.createGzip(),
    new Writable({
      write(chunk: Buffer, _enc, next) {
        chunks.push(chunk);
        next();
      },
    }),
  );
  for (const rel of files) {
    const full = path.join(root, rel);
    const stat = fs.statSync(full);
    const data = fs.readFileSync(full);
    await new Promise<void>((resolve, reject) =>
      p.entry(
        { name: rel, size: data.length, mode: stat.mode & 0o777, mtime: stat.mtime },
        data,
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  }
  p.finalize();
  await done;
  return { bytes: Buffer.concat(chunks), files: files.length, skippedLinks };
}
