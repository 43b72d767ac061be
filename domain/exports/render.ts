/**
 * An audit rendered for another tool: a Structurizr DSL workspace, a Backstage catalog
 * (catalog-info.yaml), MADR files of the repository's decisions, Mermaid and SVG diagrams, and
 * the report's SARIF and JUnit files. Pure: the export activity reads the rows and packs the
 * files. The same input always gives the same bytes.
 */
import { stringify } from 'yaml';
import { diagramGraphOf, mermaid, svg } from '../../analysis/diagram';
import type { DecisionOptionText } from '../decisions/adr';
import { mdBlock, mdCode, mdText } from '../output/markdown';
import { plainJson, plainLine } from '../output/plain';
import type { AuditReportContent } from '../reports/report';
import { renderReportJunit, renderReportSarif } from '../reports/render';

export const EXPORT_FORMATS = [
  'structurizr',
  'backstage',
  'madr',
  'mermaid',
  'svg',
  'sarif',
  'junit',
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The file each format produces: its name (after the repository's) and content type. */
export const EXPORT_FILES: Record<ExportFormat, { file: string; contentType: string }> = {
  structurizr: { file: 'workspace.dsl', contentType: 'text/plain; charset=utf-8' },
  backstage: { file: 'catalog-info.yaml', contentType: 'application/yaml' },
  madr: { file: 'decisions.tar.gz', contentType: 'application/gzip' },
  mermaid: { file: 'architecture.mmd', contentType: 'text/vnd.mermaid; charset=utf-8' },
  svg: { file: 'architecture.svg', contentType: 'image/svg+xml' },
  sarif: { file: 'findings.sarif', contentType: 'application/sarif+json' },
  junit: { file: 'controls.junit.xml', contentType: 'application/xml' },
};

export interface ExportEntity {
  canonical_key: string;
  kind: string;
  name: string;
  attributes: Record<string, unknown>;
  /** From the CODEOWNERS the audit read, for the files that declare the entity. */
  owners: string[];
}

export interface ExportRelationship {
  canonical_key: string;
  source_key: string;
  target_key: string;
  kind: string;
  attributes: Record<string, unknown>;
}

export interface ExportDecision {
  number: number;
  title: string;
  status: string;
  question: string;
  context: string;
  options: ReadonlyArray<DecisionOptionText>;
  selected_option_id: string | null;
  latest_rationale: string | null;
  affected_entity_keys: string[];
  deciders: string[];
  date: string;
}

export interface ExportInput {
  report: AuditReportContent;
  entities: ExportEntity[];
  relationships: ExportRelationship[];
  decisions: ExportDecision[];
}

/** A file of a multi-file export (MADR). */
export interface ExportFile {
  path: string;
  text: string;
}

/** Lower-case words joined by '-': file names and entity names other tools accept. */
export function slug(text: string, max = 63): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
  return s || 'unnamed';
}

const systemName = (input: ExportInput) =>
  input.report.repository?.name ??
  input.report.upload?.filename.replace(/\.(tar\.gz|tgz|zip)$/i, '') ??
  `audit-${input.report.audit_id.slice(0, 8)}`;

const dsl = (s: string) =>
  `"${plainLine(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\s+/g, ' ')}"`;

/** Kinds that are parts of the system (Structurizr containers, Backstage components/resources). */
const CONTAINER_KINDS = new Set(['service', 'job', 'ingress', 'datastore', 'queue', 'bucket']);
const RESOURCE_TYPES: Record<string, string> = {
  datastore: 'database',
  queue: 'queue',
  bucket: 'storage-bucket',
  external: 'external-service',
};

function technology(e: ExportEntity | undefined, r: ExportRelationship): string {
  const engine = e?.attributes.engine;
  if (typeof engine === 'string' && engine) return engine;
  const via = Array.isArray(r.attributes.via) ? (r.attributes.via as unknown[]) : [];
  return via.map(String).join(', ') || r.kind;
}

/**
 * A Structurizr DSL workspace: the repository as one software system whose services, jobs,
 * ingresses and stores are containers, external dependencies as software systems of their own,
 * every relationship between them with its kind and technology, and a system context and a
 * container view. Pipelines, clusters, networks and environments are deployment facts the
 * model has no element for; they are left out with their relationships.
 */
export function renderStructurizr(input: ExportInput): string {
  const ids = new Map<string, string>();
  const entities = [...input.entities].sort((a, b) =>
    a.canonical_key.localeCompare(b.canonical_key),
  );
  const inside = entities.filter((e) => CONTAINER_KINDS.has(e.kind));
  const outside = entities.filter((e) => e.kind === 'external');
  inside.forEach((e, i) => ids.set(e.canonical_key, `c${i + 1}`));
  outside.forEach((e, i) => ids.set(e.canonical_key, `x${i + 1}`));
  const byKey = new Map(entities.map((e) => [e.canonical_key, e]));
  const name = systemName(input);
  const lines = [
    `workspace ${dsl(name)} ${dsl(`Architecture of ${name} found by audit ${input.report.audit_id} (snapshot ${input.report.report_version})`)} {`,
    '',
    '    model {',
    `        system = softwareSystem ${dsl(name)} ${dsl(`Audited at ${input.report.commit_sha ?? 'an upload'}`)} {`,
  ];
  for (const e of inside)
    lines.push(
      `            ${ids.get(e.canonical_key)} = container ${dsl(e.name)} ${dsl(e.canonical_key)} ${dsl(String(e.attributes.engine ?? e.kind))} {`,
      `                tags ${dsl(e.kind)}`,
      '            }',
    );
  lines.push('        }');
  for (const e of outside)
    lines.push(
      `        ${ids.get(e.canonical_key)} = softwareSystem ${dsl(e.name)} ${dsl(e.canonical_key)} {`,
      '            tags "External"',
      '        }',
    );
  const rels = [...input.relationships].sort((a, b) =>
    a.canonical_key.localeCompare(b.canonical_key),
  );
  for (const r of rels) {
    const from = ids.get(r.source_key);
    const to = ids.get(r.target_key);
    if (!from || !to) continue;
    lines.push(
      `        ${from} -> ${to} ${dsl(r.kind)} ${dsl(technology(byKey.get(r.target_key), r))}`,
    );
  }
  lines.push(
    '    }',
    '',
    '    views {',
    '        systemContext system "SystemContext" {',
    '            include *',
    '            autolayout lr',
    '        }',
    '        container system "Containers" {',
    '            include *',
    '            autolayout lr',
    '        }',
    '        styles {',
    '            element "datastore" {',
    '                shape Cylinder',
    '            }',
    '            element "queue" {',
    '                shape Pipe',
    '            }',
    '            element "External" {',
    '                background #999999',
    '            }',
    '        }',
    '    }',
    '}',
    '',
  );
  return lines.join('\n');
}

/** A CODEOWNERS owner as a Backstage entity reference (`@org/team` a group, `@login` a user). */
export function ownerRef(owner: string): string {
  const team = /^@[^/]+\/(.+)$/.exec(owner);
  if (team) return `group:default/${slug(team[1]!)}`;
  if (owner.startsWith('@')) return `user:default/${slug(owner.slice(1))}`;
  return `user:default/${slug(owner.split('@')[0] ?? owner)}`;
}

const UNOWNED = 'group:default/unowned';

/**
 * A Backstage catalog: the repository as a System, services and jobs as Components, stores and
 * external dependencies as Resources, each relationship as `dependsOn` of its source. Owners
 * come from the CODEOWNERS line that covers the files declaring the entity; the system's owner
 * is the most frequent one. Canonical keys are kept as annotations.
 */
export function renderBackstage(input: ExportInput): string {
  const system = slug(systemName(input));
  const ref = new Map<string, string>();
  const docs: Array<Record<string, unknown>> = [];
  const entities = [...input.entities]
    .filter((e) => CONTAINER_KINDS.has(e.kind) || e.kind === 'external')
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const e of entities) {
    const isResource = e.kind in RESOURCE_TYPES;
    let name = slug(e.name);
    const kind = isResource ? 'resource' : 'component';
    // Two entities of one Backstage kind with the same name (a service and a job) stay apart.
    if (taken.has(`${kind}:${name}`)) name = slug(`${e.kind}-${e.name}`);
    taken.add(`${kind}:${name}`);
    names.set(e.canonical_key, name);
    ref.set(e.canonical_key, `${kind}:default/${name}`);
  }
  const ownerCount = new Map<string, number>();
  for (const e of entities)
    for (const o of e.owners) ownerCount.set(o, (ownerCount.get(o) ?? 0) + 1);
  const top = [...ownerCount.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  docs.push({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'System',
    metadata: {
      name: system,
      description: `Architecture found by audit ${input.report.audit_id} (snapshot ${input.report.report_version}).`,
      annotations: {
        'archaudit.io/audit-id': input.report.audit_id,
        ...(input.report.commit_sha ? { 'archaudit.io/commit-sha': input.report.commit_sha } : {}),
      },
    },
    spec: { owner: top ? ownerRef(top[0]) : UNOWNED },
  });
  for (const e of entities) {
    const isResource = e.kind in RESOURCE_TYPES;
    const dependsOn = [
      ...new Set(
        input.relationships
          .filter((r) => r.source_key === e.canonical_key && ref.has(r.target_key))
          .map((r) => ref.get(r.target_key)!),
      ),
    ].sort();
    docs.push({
      apiVersion: 'backstage.io/v1alpha1',
      kind: isResource ? 'Resource' : 'Component',
      metadata: {
        name: names.get(e.canonical_key),
        title: e.name,
        annotations: { 'archaudit.io/canonical-key': e.canonical_key },
        tags: [slug(e.kind)],
      },
      spec: {
        type: isResource ? RESOURCE_TYPES[e.kind] : e.kind === 'job' ? 'job' : 'service',
        ...(isResource ? {} : { lifecycle: 'production' }),
        owner: e.owners[0] ? ownerRef(e.owners[0]) : UNOWNED,
        system,
        ...(dependsOn.length ? { dependsOn } : {}),
      },
    });
  }
  // YAML escapes C0 but leaves DEL, C1 and the bidi controls raw: replaced first.
  return docs.map((d) => stringify(plainJson(d), { lineWidth: 0 })).join('---\n');
}

const MADR_STATUS: Record<string, string> = {
  proposed: 'proposed',
  in_review: 'proposed',
  approved: 'accepted',
  implemented: 'accepted',
  verified: 'accepted',
  rejected: 'rejected',
  superseded: 'superseded',
};

/** A YAML front-matter value on one line (plain text, quoted when YAML would read it otherwise). */
function yamlLine(text: string): string {
  return stringify(plainLine(text), { lineWidth: 0 }).trimEnd();
}

/**
 * MADR 4 files, one per decision (`NNNN-title.md`), and an index. Decision text goes through
 * domain/output/markdown; the index's links are to its own sibling files (slugs).
 */
export function renderMadr(input: ExportInput): ExportFile[] {
  const files: ExportFile[] = [];
  const decisions = [...input.decisions].sort((a, b) => a.number - b.number);
  const fileOf = (d: ExportDecision) =>
    `${String(d.number).padStart(4, '0')}-${slug(d.title, 60)}.md`;
  for (const d of decisions) {
    const chosen = d.options.find((o) => o.id === d.selected_option_id);
    const lines = [
      '---',
      `status: ${MADR_STATUS[d.status] ?? 'proposed'}`,
      `date: ${yamlLine(d.date)}`,
      ...(d.deciders.length ? [`decision-makers: ${yamlLine(d.deciders.join(', '))}`] : []),
      '---',
      '',
      `# ${mdText(d.title)}`,
      '',
      '## Context and Problem Statement',
      '',
      mdBlock(d.context),
      '',
      mdBlock(d.question),
      '',
    ];
    if (d.affected_entity_keys.length)
      lines.push(
        '## Decision Drivers',
        '',
        ...d.affected_entity_keys.map((k) => `* affects ${mdCode(k)}`),
        '',
      );
    lines.push('## Considered Options', '', ...d.options.map((o) => `* ${mdText(o.title)}`), '');
    lines.push('## Decision Outcome', '');
    lines.push(
      chosen
        ? `Chosen option: "${mdText(chosen.title)}", because ${mdText(d.latest_rationale ?? 'it was selected')}.`
        : `No option chosen yet (status: ${mdText(d.status)}).`,
      '',
      '## Pros and Cons of the Options',
      '',
    );
    for (const o of d.options) {
      lines.push(`### ${mdText(o.title)}`, '', mdBlock(o.description), '');
      for (const b of o.benefits ?? []) lines.push(`* Good, because ${mdText(b)}`);
      for (const t of o.tradeoffs ?? []) lines.push(`* Bad, because ${mdText(t)}`);
      if ((o.benefits?.length ?? 0) + (o.tradeoffs?.length ?? 0) > 0) lines.push('');
    }
    files.push({ path: `decisions/${fileOf(d)}`, text: lines.join('\n') });
  }
  const index = [
    `# Architecture decisions of ${mdText(systemName(input))}`,
    '',
    decisions.length === 0
      ? 'No decisions recorded.'
      : decisions
          .map(
            (d) => `* [${mdText(d.title)}](${fileOf(d)}) (${MADR_STATUS[d.status] ?? 'proposed'})`,
          )
          .join('\n'),
    '',
  ];
  return [{ path: 'decisions/README.md', text: index.join('\n') }, ...files];
}

/** Every single-file format; `madr` is packed by the caller. */
export function renderExportText(
  format: Exclude<ExportFormat, 'madr'>,
  input: ExportInput,
): string {
  switch (format) {
    case 'structurizr':
      return renderStructurizr(input);
    case 'backstage':
      return renderBackstage(input);
    case 'mermaid':
      return mermaid(diagramGraphOf(input.report.architecture));
    case 'svg':
      return svg(diagramGraphOf(input.report.architecture), {
        title: `Architecture of ${systemName(input)} (snapshot ${input.report.report_version})`,
      });
    case 'sarif':
      return `${JSON.stringify(renderReportSarif(input.report), null, 2)}\n`;
    case 'junit':
      return renderReportJunit(input.report);
  }
}
