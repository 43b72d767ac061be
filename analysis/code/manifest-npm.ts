/** package.json (npm, yarn, pnpm workspaces) and PHP's composer.json. */
import type { SourceFile } from '../evidence';
import { dirname, joinPath } from '../shared/paths';
import { member, parseJsonWithLines, stringValue, type JsonNode } from './json-lines';
import { parseGap, stripUrlCredentials } from './manifest-common';
import type { ParsedManifest } from './model';

const NPM_SECTIONS: [string, Record<string, unknown>, boolean][] = [
  ['dependencies', {}, false],
  ['devDependencies', {}, true],
  ['peerDependencies', { peer: true }, false],
  ['optionalDependencies', { optional: true }, false],
];

/**
 * PHP's composer.json: the package name and `require` / `require-dev` (platform requirements
 * such as `php` and `ext-*` are no packages). Its directory is a unit, so a PHP service's code and
 * settings are read for connections.
 */
export function parseComposer(file: SourceFile, m: ParsedManifest): void {
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok || parsed.node.type !== 'object') {
    m.gaps.push(parseGap(file.path, 'composer.json is not a JSON object'));
    return;
  }
  const root = parsed.node;
  const name = member(root, 'name');
  const nameText = stringValue(name?.value);
  if (name && nameText && nameText.trim() !== '') {
    // `vendor/package`: the unit is known by the package part.
    m.name = nameText.trim().split('/').pop() ?? nameText.trim();
    m.nameLine = name.line;
  }
  for (const [section, dev] of [
    ['require', false],
    ['require-dev', true],
  ] as const) {
    const deps = member(root, section)?.value;
    if (!deps || deps.type !== 'object') continue;
    for (const entry of deps.entries) {
      if (entry.key === 'php' || /^(ext|lib)-/.test(entry.key)) continue;
      m.dependencies.push({
        ecosystem: 'composer',
        name: entry.key,
        version: stringValue(entry.value),
        dev,
        path: file.path,
        line: entry.line,
        endLine: entry.value.endLine,
        attributes: { section },
      });
    }
  }
}

export function parsePackageJson(file: SourceFile, m: ParsedManifest): void {
  const parsed = parseJsonWithLines(file.text);
  if (!parsed.ok) {
    m.gaps.push(parseGap(file.path, `package.json is not valid JSON: ${parsed.message}`));
    return;
  }
  const root = parsed.node;
  if (root.type !== 'object') {
    m.gaps.push(parseGap(file.path, 'package.json is not a JSON object'));
    return;
  }
  const name = member(root, 'name');
  const nameText = stringValue(name?.value);
  if (name && nameText && nameText.trim() !== '') {
    m.name = nameText.trim();
    m.nameLine = name.line;
  }
  const ws = member(root, 'workspaces')?.value;
  const globs: JsonNode | undefined = ws?.type === 'object' ? member(ws, 'packages')?.value : ws;
  if (globs?.type === 'array') {
    m.workspaceRoot = true;
    for (const g of globs.items) if (g.type === 'string') m.workspaceMembers.push(g.value);
  }
  for (const [section, extra, dev] of NPM_SECTIONS) {
    const deps = member(root, section)?.value;
    if (!deps || deps.type !== 'object') continue;
    for (const entry of deps.entries) {
      const spec = stringValue(entry.value);
      const version = spec === null ? null : stripUrlCredentials(spec);
      const attributes: Record<string, unknown> = { section, ...extra };
      if (version && /^(file|link|portal):/.test(version)) {
        const local = joinPath(dirname(file.path), version.replace(/^[a-z]+:/, ''));
        if (local !== null) attributes.local_path = local === '' ? '.' : local;
      }
      if (version?.startsWith('workspace:')) attributes.workspace_protocol = true;
      m.dependencies.push({
        ecosystem: 'npm',
        name: entry.key,
        version,
        dev,
        path: file.path,
        line: entry.line,
        endLine: entry.value.endLine,
        attributes,
      });
    }
  }
}
