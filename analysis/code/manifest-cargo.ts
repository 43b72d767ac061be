/** Rust's Cargo.toml: package name, workspace members and every dependency table. */
import type { SourceFile } from '../evidence';
import { tableDependencies, tomlErrors } from './manifest-common';
import type { ParsedManifest } from './model';
import { readToml, stringItems, tomlText } from './toml';

export function parseCargo(file: SourceFile, m: ParsedManifest): void {
  const doc = readToml(file.text);
  tomlErrors(file, doc, m);
  const name = doc.assignments.find(
    (a) => a.path.length === 2 && a.path[0] === 'package' && a.path[1] === 'name',
  );
  const nameText = tomlText(name?.value);
  if (name && nameText) {
    m.name = nameText;
    m.nameLine = name.line;
  }
  const hasPackage =
    doc.headers.some((h) => h.path[0] === 'package') ||
    doc.assignments.some((a) => a.path[0] === 'package');
  const hasWorkspace =
    doc.headers.some((h) => h.path[0] === 'workspace') ||
    doc.assignments.some((a) => a.path[0] === 'workspace');
  if (hasWorkspace) {
    const members = doc.assignments.find(
      (a) => a.path.length === 2 && a.path[0] === 'workspace' && a.path[1] === 'members',
    );
    m.workspaceMembers = stringItems(members?.value).map((s) => s.value);
    // A virtual manifest (workspace without a package) only aggregates its members.
    m.workspaceRoot = !hasPackage;
  }
  const prefixes: [string[], boolean, Record<string, unknown>][] = [
    [['dependencies'], false, { section: 'dependencies' }],
    [['dev-dependencies'], true, { section: 'dev-dependencies' }],
    [['build-dependencies'], false, { section: 'build-dependencies', build: true }],
    [['workspace', 'dependencies'], false, { section: 'workspace.dependencies' }],
  ];
  const targets = new Set<string>();
  for (const p of [...doc.headers.map((h) => h.path), ...doc.assignments.map((a) => a.path)]) {
    if (p[0] === 'target' && p.length >= 3) targets.add(p[1] as string);
  }
  for (const t of [...targets].sort()) {
    prefixes.push([
      ['target', t, 'dependencies'],
      false,
      { section: 'target.dependencies', target: t },
    ]);
    prefixes.push([
      ['target', t, 'dev-dependencies'],
      true,
      { section: 'target.dev-dependencies', target: t },
    ]);
    prefixes.push([
      ['target', t, 'build-dependencies'],
      false,
      { section: 'target.build-dependencies', target: t },
    ]);
  }
  for (const [prefix, dev, attributes] of prefixes) {
    m.dependencies.push(
      ...tableDependencies(file, doc, prefix, { ecosystem: 'cargo', dev, attributes }),
    );
  }
}
