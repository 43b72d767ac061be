/**
 * Go programs without a module: a folder of `package main` sources with no go.mod in it or
 * above it (GOPATH-era code, or a Dockerfile that runs `go mod init` / `go get` itself). Such a
 * folder is a unit of its own (named after the folder, cited at its `package main` line), so
 * its code is read like any Go program's. Vendored code and test data are not programs.
 */
import type { SourceFile } from '../evidence';
import { dirname } from '../shared/paths';

const SKIPPED = /(^|\/)(vendor|testdata|third_party|examples?|_examples?)(\/|$)/;

/** Folder -> the first `package main` line of it, for folders no go.mod covers. */
export function looseGoMains(
  files: SourceFile[],
  goModDirs: Set<string>,
): Map<string, { path: string; line: number }> {
  const out = new Map<string, { path: string; line: number }>();
  const covered = (dir: string): boolean => {
    for (let d = dir; ; d = dirname(d)) {
      if (goModDirs.has(d)) return true;
      if (d === '') return false;
    }
  };
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    if (!f.path.endsWith('.go') || f.path.endsWith('_test.go') || SKIPPED.test(f.path)) continue;
    const dir = dirname(f.path);
    if (out.has(dir)) continue;
    const m = /^[ \t]*package[ \t]+main\b/m.exec(f.text);
    if (!m || covered(dir)) continue;
    out.set(dir, { path: f.path, line: f.text.slice(0, m.index).split('\n').length });
  }
  return out;
}
