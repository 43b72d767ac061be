/** JVM builds: Maven pom.xml (properties resolved, modules) and Gradle build scripts. */
import type { SourceFile } from '../evidence';
import { lex } from './common';
import { parseGap } from './manifest-common';
import type { ParsedManifest } from './model';
import { child, childText, children, readXml, type XmlElement } from './xml';

export function parsePom(file: SourceFile, m: ParsedManifest): void {
  const { root, errors } = readXml(file.text);
  if (errors.length > 0)
    m.gaps.push(parseGap(file.path, `pom.xml could not be read cleanly: ${errors[0] ?? ''}`));
  if (!root || root.name !== 'project') return;
  const artifact = child(root, 'artifactId');
  if (artifact && artifact.text.trim()) {
    m.name = artifact.text.trim();
    m.nameLine = artifact.line;
  }
  const props = new Map<string, string>();
  for (const p of child(root, 'properties')?.children ?? []) props.set(p.name, p.text.trim());
  const parent = child(root, 'parent');
  const version = childText(root, 'version') ?? childText(parent, 'version');
  const groupId = childText(root, 'groupId') ?? childText(parent, 'groupId');
  if (version) props.set('project.version', version);
  if (groupId) props.set('project.groupId', groupId);
  const resolve = (v: string | null): string | null =>
    v === null ? null : v.replace(/\$\{([^}]+)\}/g, (whole, k: string) => props.get(k) ?? whole);

  const modules = children(child(root, 'modules'), 'module')
    .map((x) => x.text.trim())
    .filter(Boolean);
  if (childText(root, 'packaging') === 'pom' && modules.length > 0) {
    m.workspaceRoot = true;
    m.workspaceMembers = modules;
  }
  const add = (dep: XmlElement, managed: boolean): void => {
    const g = resolve(childText(dep, 'groupId'));
    const a = resolve(childText(dep, 'artifactId'));
    if (!g || !a) return;
    const scope = childText(dep, 'scope');
    const attributes: Record<string, unknown> = { group_id: g, artifact_id: a };
    if (scope) attributes.scope = scope;
    if (managed) attributes.managed = true;
    if (childText(dep, 'optional') === 'true') attributes.optional = true;
    m.dependencies.push({
      ecosystem: 'maven',
      name: `${g}:${a}`,
      version: resolve(childText(dep, 'version')),
      dev: scope === 'test',
      path: file.path,
      line: dep.line,
      endLine: dep.endLine,
      attributes,
    });
  };
  for (const d of children(child(root, 'dependencies'), 'dependency')) add(d, false);
  for (const d of children(
    child(child(root, 'dependencyManagement'), 'dependencies'),
    'dependency',
  ))
    add(d, true);
}

const GRADLE_CONFIG =
  /^\s*(implementation|api|compile|compileOnly|runtimeOnly|runtime|testImplementation|testCompile|testCompileOnly|testRuntimeOnly|androidTestImplementation|annotationProcessor|kapt|ksp|developmentOnly|debugImplementation)\b\s*\(?\s*(?:(?:platform|enforcedPlatform)\s*\(\s*)?/;

export function parseGradle(file: SourceFile, m: ParsedManifest): void {
  const { code } = lex(file.text, 'c');
  code.split('\n').forEach((text, idx) => {
    const cfg = GRADLE_CONFIG.exec(text);
    if (!cfg) return;
    const config = cfg[1] ?? '';
    const rest = text.slice(cfg[0].length);
    let group: string | null = null;
    let artifact: string | null = null;
    let version: string | null = null;
    const coord = /^['"]([^'"\s]+)['"]/.exec(rest);
    const map =
      /group\s*[:=]\s*['"]([^'"]+)['"]\s*,\s*name\s*[:=]\s*['"]([^'"]+)['"](?:\s*,\s*version\s*[:=]\s*['"]([^'"]+)['"])?/.exec(
        rest,
      );
    if (coord) {
      const parts = (coord[1] ?? '').split(':');
      if (parts.length < 2) return;
      [group, artifact] = [parts[0] ?? null, parts[1] ?? null];
      version = parts[2] ?? null;
    } else if (map) {
      [group, artifact, version] = [map[1] ?? null, map[2] ?? null, map[3] ?? null];
    }
    if (!group || !artifact) return;
    m.dependencies.push({
      ecosystem: 'maven',
      name: `${group}:${artifact}`,
      version,
      dev: /^(test|androidTest)/.test(config),
      path: file.path,
      line: idx + 1,
      endLine: idx + 1,
      attributes: { configuration: config, group_id: group, artifact_id: artifact },
    });
  });
}
