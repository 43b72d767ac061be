/** .NET project files (*.csproj): PackageReference and ProjectReference items. */
import type { SourceFile } from '../evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { parseGap } from './manifest-common';
import type { ParsedManifest } from './model';
import { readXml, childText, type XmlElement } from './xml';

function walk(el: XmlElement, visit: (e: XmlElement) => void): void {
  visit(el);
  for (const c of el.children) walk(c, visit);
}

export function parseCsproj(file: SourceFile, m: ParsedManifest): void {
  m.name = basename(file.path).replace(/\.csproj$/i, '');
  const { root, errors } = readXml(file.text);
  if (errors.length > 0)
    m.gaps.push(
      parseGap(file.path, `${basename(file.path)} could not be read cleanly: ${errors[0] ?? ''}`),
    );
  m.nameLine = root?.line ?? 1;
  if (!root) return;
  walk(root, (el) => {
    if (el.name === 'PackageReference') {
      const name = el.attrs.Include ?? el.attrs.Update;
      if (!name) return;
      const version = el.attrs.Version ?? el.attrs.VersionOverride ?? childText(el, 'Version');
      const privateAssets = el.attrs.PrivateAssets ?? childText(el, 'PrivateAssets');
      const attributes: Record<string, unknown> = {};
      if (privateAssets) attributes.private_assets = privateAssets;
      m.dependencies.push({
        ecosystem: 'nuget',
        name,
        version: version ?? null,
        dev: privateAssets?.toLowerCase() === 'all',
        path: file.path,
        line: el.line,
        endLine: el.endLine,
        attributes,
      });
    } else if (el.name === 'ProjectReference' && el.attrs.Include) {
      const local = joinPath(dirname(file.path), el.attrs.Include);
      m.dependencies.push({
        ecosystem: 'nuget',
        name: basename(el.attrs.Include.replace(/\\/g, '/')).replace(/\.[a-z]+proj$/i, ''),
        version: null,
        dev: false,
        path: file.path,
        line: el.line,
        endLine: el.endLine,
        attributes: { project_reference: true, ...(local ? { local_path: local } : {}) },
      });
    }
  });
}
