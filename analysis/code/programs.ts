/**
 * Programs: the Go main packages of one unit (`cmd/<name>/main.go`: `package main` with a
 * `func main()`), when the unit holds several. One image built from such a unit runs a different
 * program per deployment (`entrypoint: orders`); reconcile (analysis/reconcile-programs.ts) gives
 * each program's code to the deployment that runs it.
 *
 * Evidence `program-declared`, subject the unit, cited at the `func main()` line; attributes
 * `program` (the folder's name: the binary `go build` / `go install ./cmd/...` makes), `dir`
 * (its folder) and `dirs` (its folder and the folders of the unit's own packages it imports,
 * transitively: the code that program runs).
 */
import type { Evidence, SourceFile } from '../evidence';
import { normalizeName } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isTestPath, lex } from './common';
import { extractGoImports } from './imports';
import type { CodeModel, Unit } from './model';

const MAIN_PACKAGE = /^\s*package\s+main\b/m;
const MAIN_FUNC = /^func\s+main\s*\(\s*\)/m;

/** The unit's own Go packages: folder -> its non-test Go files. */
function goPackages(files: SourceFile[]): Map<string, SourceFile[]> {
  const byDir = new Map<string, SourceFile[]>();
  for (const f of files) {
    if (!f.path.endsWith('.go') || isTestPath(f.path)) continue;
    const dir = dirname(f.path);
    byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
  }
  return byDir;
}

/** Each package folder's direct imports of the unit's own packages (read once per file). */
function localImports(unit: Unit, packages: Map<string, SourceFile[]>): Map<string, string[]> {
  const module = unit.goModule ?? '';
  const out = new Map<string, string[]>();
  for (const [dir, files] of packages) {
    const targets = new Set<string>();
    for (const f of files) {
      if (!f.text.includes(module)) continue;
      for (const imp of extractGoImports(f.text)) {
        if (!imp.spec.startsWith(`${module}/`)) continue;
        const target = joinPath(unit.dir, imp.spec.slice(module.length + 1));
        if (target !== null && packages.has(target)) targets.add(target);
      }
    }
    out.set(dir, [...targets]);
  }
  return out;
}

/** The folders `dir` imports, transitively, with `dir` itself. */
function importedDirs(imports: Map<string, string[]>, dir: string): string[] {
  const seen = new Set<string>([dir]);
  const queue = [dir];
  while (queue.length > 0) {
    for (const target of imports.get(queue.shift() as string) ?? []) {
      if (seen.has(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return [...seen].sort();
}

/** program-declared evidence of every unit that holds two or more Go main packages. */
export function programEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const unit of model.units) {
    if (!unit.goModule) continue;
    const packages = goPackages(model.filesByUnit.get(unit.key) ?? []);
    const mains: Array<{ dir: string; file: SourceFile; line: number }> = [];
    for (const [dir, files] of packages) {
      if (dir === unit.dir) continue;
      for (const file of files) {
        if (!MAIN_PACKAGE.test(file.text)) continue;
        const { code } = lex(file.text, 'go');
        const m = MAIN_FUNC.exec(code);
        if (!m) continue;
        mains.push({ dir, file, line: new LineIndex(file.text).lineAt(m.index) });
        break;
      }
    }
    if (mains.length < 2) continue;
    const imports = localImports(unit, packages);
    for (const { dir, file, line } of mains.sort((a, b) => (a.dir < b.dir ? -1 : 1))) {
      const program = normalizeName(basename(dir));
      if (!program) continue;
      out.push(
        evidence(
          file,
          { start: line, end: line },
          {
            source: 'code',
            provider: 'go-source',
            kind: 'program-declared',
            subject: unit.key,
            summary: `unit ${unit.name} holds the program ${program} (${dir})`,
            attributes: { program, dir, dirs: importedDirs(imports, dir) },
          },
        ),
      );
    }
  }
  return out;
}
