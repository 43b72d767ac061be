/**
 * Applications of one Go module: a mono-repo module (one go.mod at its root) whose programs live
 * in application folders of their own, each with its `cmd/<program>/main.go` (the Go project
 * layout of kratos-layout and others: `app/user/service/cmd/server/main.go`,
 * `app/shop/admin/cmd/server/main.go`, each folder with its own `internal/` and `configs/`).
 * When two or more such folders sit below one module (not the module's own folder), each is a
 * unit of its own: its code, settings and connections are that application's, not the whole
 * module's. Name: the folder's path below the folders' common parent, `/` -> `-`
 * (`app/user/service` -> `user-service`, the `APP_RELATIVE_PATH` convention of those layouts);
 * its Go import path is the module path plus the folder. Vendored code, test data and examples
 * are no applications.
 */
import type { SourceFile } from '../evidence';
import { normalizeName } from '../evidence';
import { dirname, isWithin, relativeTo } from '../shared/paths';

const SKIPPED = /(^|\/)(vendor|testdata|third_party|examples?|_examples?)(\/|$)/;
/** `<app>/cmd/main.go` or `<app>/cmd/<program>/<file>.go`. */
const CMD = /^(.*)\/cmd(?:\/[^/]+)?\/[^/]+\.go$/;

export interface GoApp {
  /** The unit's name (path below the common parent). */
  name: string;
  /** Go import path of the folder. */
  goModule: string;
  /** The first `package main` file of it, and that line. */
  path: string;
  line: number;
}

/** The common parent folder of `dirs` ('' for the repository root). */
function commonParent(dirs: string[]): string {
  let parent = dirname(dirs[0] ?? '');
  while (parent !== '' && !dirs.every((d) => isWithin(d, parent) && d !== parent))
    parent = dirname(parent);
  return parent;
}

/** Folder -> application, for the modules (dir -> module path) holding two or more of them. */
export function goApps(files: SourceFile[], goModules: Map<string, string>): Map<string, GoApp> {
  const moduleOf = (dir: string): string | null => {
    for (let d = dir; ; d = dirname(d)) {
      if (goModules.has(d)) return d;
      if (d === '') return null;
    }
  };
  const byModule = new Map<string, Map<string, { path: string; line: number }>>();
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    if (f.path.endsWith('_test.go') || SKIPPED.test(f.path)) continue;
    const app = CMD.exec(f.path)?.[1];
    if (app === undefined) continue;
    const mod = moduleOf(dirname(f.path));
    // The application folder is inside the module and holds no module of its own.
    if (mod === null || app === mod || !isWithin(app, mod) || moduleOf(app) !== mod) continue;
    const m = /^[ \t]*package[ \t]+main\b/m.exec(f.text);
    if (!m) continue;
    const apps = byModule.get(mod) ?? new Map<string, { path: string; line: number }>();
    byModule.set(mod, apps);
    if (!apps.has(app))
      apps.set(app, { path: f.path, line: f.text.slice(0, m.index).split('\n').length });
  }
  const out = new Map<string, GoApp>();
  for (const [mod, apps] of byModule) {
    // Applications nested in another are that one's programs, not applications of their own.
    const dirs = [...apps.keys()].filter(
      (d) => ![...apps.keys()].some((o) => o !== d && isWithin(d, o)),
    );
    if (dirs.length < 2) continue;
    const parent = commonParent(dirs);
    for (const dir of dirs) {
      const name = normalizeName(relativeTo(dir, parent).replace(/\//g, '-'));
      if (!name) continue;
      const at = apps.get(dir)!;
      const rel = relativeTo(dir, mod);
      out.set(dir, { name, goModule: `${goModules.get(mod)}/${rel}`, ...at });
    }
  }
  return out;
}
