/**
 * Terraform (*.tf, parsed by @cdktf/hcl2json): AWS, GCP and Azure resources mapped to datastores,
 * queues, buckets, networks, services and clusters, their security settings, and the references
 * between them (`${aws_db_instance.main.address}` in an ECS service).
 */
import { parse } from '@cdktf/hcl2json';
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { dirname } from '../shared/paths';
import {
  isLiteralValue,
  isSecretName,
  looksLikeSecretValue,
  placeholderReason,
} from '../shared/secrets';
import { errorMessage } from '../shared/text';
import { isRecord } from '../shared/values';
import { attributeSpan, findLine, topLevelBlocks } from './hcl-text';
import { instanceEvidence, localModuleCalls, type TemplateResource } from './terraform-modules';
import {
  CATALOG,
  COMPANIONS,
  detailsOf,
  get,
  imagesOf,
  isExpression,
  securityOf,
  STORAGE_MODULES,
  type CatalogEntry,
} from './terraform-catalog';

const PROVIDER = 'terraform';
type Obj = Record<string, unknown>;

interface TfResource {
  file: SourceFile;
  lines: string[];
  dir: string;
  type: string;
  name: string;
  address: string;
  body: Obj;
  span: Span;
}

interface Mapped {
  entry: CatalogEntry;
  key: string;
  entityName: string;
  nameSource: 'argument' | 'label' | 'module-template' | 'module-call' | 'per-instance';
}

/** Analyzes .tf files; references resolve within the same directory (one Terraform module). */
export async function analyzeTerraform(files: SourceFile[]): Promise<AnalyzerOutput> {
  const gaps: AnalyzerGap[] = [];
  const resources: TfResource[] = [];
  const parsed: Array<{ file: SourceFile; json: Obj }> = [];
  for (const file of files) {
    let json: Obj;
    try {
      json = await parse(file.path, file.text);
    } catch (err) {
      gaps.push({ path: file.path, reason: 'terraform_parse_error', message: errorMessage(err) });
      continue;
    }
    parsed.push({ file, json });
    const lines = file.text.split('\n');
    const blocks = topLevelBlocks(file.text);
    const resourceJson = isRecord(json.resource) ? json.resource : {};
    for (const [type, byName] of Object.entries(resourceJson)) {
      if (!isRecord(byName)) continue;
      for (const [name, bodies] of Object.entries(byName)) {
        const body = Array.isArray(bodies) ? bodies[0] : bodies;
        if (!isRecord(body)) continue;
        const block = blocks.find(
          (b) => b.type === 'resource' && b.labels[0] === type && b.labels[1] === name,
        );
        const span = block ? { start: block.start, end: block.end } : { start: 1, end: 1 };
        resources.push({
          file,
          lines,
          dir: dirname(file.path),
          type,
          name,
          address: `${type}.${name}`,
          body,
          span,
        });
      }
    }
    gaps.push(...moduleGaps(file, json));
    resources.push(...storageModules(file, json, lines, blocks));
  }
  const calls = localModuleCalls(parsed);
  const index = new Index(resources, wrapperDirs(resources, calls));
  const out: Evidence[] = [];
  for (const r of resources) {
    out.push(...declared(r, index), ...references(r, index), ...literalSecrets(r, index));
  }
  const typesByDir = new Map<string, Set<string>>();
  for (const r of resources)
    typesByDir.set(r.dir, (typesByDir.get(r.dir) ?? new Set()).add(r.type));
  out.push(...instanceEvidence(templatesOf(resources, index), calls, typesByDir));
  return { evidence: out, gaps };
}

/**
 * Directories local module calls instantiate that wrap one resource the catalog maps, under a
 * label of its own (`aws_dynamodb_table.dynamodb_table`): each call is one instance of it. A
 * module of several such resources keeps their labels as names; `this`/`self` stay templates.
 */
function wrapperDirs(resources: TfResource[], calls: Map<string, unknown[]>): Set<string> {
  const mapped = new Map<string, TfResource[]>();
  for (const r of resources)
    if (CATALOG[r.type] && calls.has(r.dir) && !r.address.startsWith('module.'))
      mapped.set(r.dir, [...(mapped.get(r.dir) ?? []), r]);
  return new Set(
    [...mapped]
      .filter(([, list]) => list.length === 1 && !TEMPLATE_LABELS.has(list[0]!.name))
      .map(([dir]) => dir),
  );
}

/** The template resources of directories that wrap one resource (wrapperDirs). */
function templatesOf(resources: TfResource[], index: Index): TemplateResource[] {
  return resources.flatMap((r) => {
    const m = index.entity(r);
    if (!m || m.nameSource !== 'module-template' || !index.wraps(r.dir)) return [];
    const engine =
      typeof m.entry.engine === 'function' ? m.entry.engine(r.body) : (m.entry.engine ?? null);
    return [
      {
        type: r.type,
        address: r.address,
        dir: r.dir,
        body: r.body,
        kind: m.entry.kind,
        engine,
        cloud: cloudOf(r.type),
        details: detailsOf(r.body),
        security: securityOf(r.type, r.body),
      },
    ];
  });
}

function cloudOf(type: string): string {
  const prefix = type.split('_')[0] ?? '';
  return prefix === 'google-beta' ? 'google' : prefix;
}

/**
 * Calls of a registry module that wraps one storage resource (STORAGE_MODULES), read as that
 * resource with the module's defaults under the call's inputs, so the storage controls judge it.
 */
function storageModules(
  file: SourceFile,
  json: Obj,
  lines: string[],
  blocks: ReturnType<typeof topLevelBlocks>,
): TfResource[] {
  const modules = isRecord(json.module) ? json.module : {};
  return Object.entries(modules).flatMap(([name, bodies]) => {
    const body = Array.isArray(bodies) ? bodies[0] : bodies;
    const source = isRecord(body) && typeof body.source === 'string' ? body.source : '';
    const known = STORAGE_MODULES[source.replace(/\?.*$/, '').toLowerCase()];
    if (!known || !isRecord(body)) return [];
    const block = blocks.find((b) => b.type === 'module' && b.labels[0] === name);
    return [
      {
        file,
        lines,
        dir: dirname(file.path),
        type: known.type,
        name,
        address: `module.${name}`,
        body: { ...known.defaults, ...body, module_source: source },
        span: block ? { start: block.start, end: block.end } : { start: 1, end: 1 },
      },
    ];
  });
}

/** Remote modules are not fetched, so what they create is a coverage gap. */
function moduleGaps(file: SourceFile, json: Obj): AnalyzerGap[] {
  const modules = isRecord(json.module) ? json.module : {};
  return Object.entries(modules).flatMap(([name, bodies]) => {
    const body = Array.isArray(bodies) ? bodies[0] : bodies;
    const source = isRecord(body) && typeof body.source === 'string' ? body.source : '';
    if (source.startsWith('./') || source.startsWith('../')) return [];
    return [
      {
        path: file.path,
        reason: 'terraform_module_not_expanded',
        message: `module "${name}" (source ${source || 'unknown'}) is not expanded; the resources it creates are not analyzed`,
      },
    ];
  });
}

class Index {
  private readonly byAddress = new Map<string, TfResource[]>();
  private readonly mapped = new Map<TfResource, Mapped | null>();

  /** `wrappers`: directories whose one resource local module calls instantiate (wrapperDirs). */
  constructor(
    resources: TfResource[],
    private readonly wrappers: Set<string> = new Set(),
  ) {
    for (const r of resources) {
      const list = this.byAddress.get(r.address) ?? [];
      list.push(r);
      this.byAddress.set(r.address, list);
    }
  }

  /** The declared resource at `address`, preferring the same directory. */
  find(address: string, dir: string): TfResource | null {
    const list = this.byAddress.get(address) ?? [];
    return list.find((r) => r.dir === dir) ?? (list.length === 1 ? (list[0] ?? null) : null);
  }

  wraps(dir: string): boolean {
    return this.wrappers.has(dir);
  }

  entity(r: TfResource): Mapped | null {
    if (!this.mapped.has(r)) this.mapped.set(r, mapResource(r, this.wraps(r.dir)));
    return this.mapped.get(r) ?? null;
  }

  /** Entity key of a resource: its catalog entity, its companion's parent, or `resource:<type>.<name>`. */
  keyOf(r: TfResource, depth = 0): string {
    const m = this.entity(r);
    if (m) return m.key;
    const companion = COMPANIONS[r.type];
    if (!companion) return entityKey('resource', r.address);
    const parent = depth < 3 ? this.parentOf(r) : null;
    if (parent) return this.keyOf(parent, depth + 1);
    return entityKey(
      companion.evidenceKind === 'network-declared' ? 'network' : 'resource',
      r.name,
    );
  }

  /** Parent of a companion resource (a rule's security group, a versioning block's bucket). */
  parentOf(r: TfResource): TfResource | null {
    const c = COMPANIONS[r.type];
    const v = c ? get(r.body, c.parent) : undefined;
    if (typeof v !== 'string') return null;
    for (const ref of referencesIn(v)) {
      if (ref.kind === 'resource') {
        const p = this.find(ref.address, r.dir);
        if (p) return p;
      }
    }
    return null;
  }
}

/**
 * Labels a reusable module gives the one resource it makes (`resource "aws_ecs_service" "this"`):
 * with its name an expression (`name = var.service_name`), the resource is a template stamped
 * out once per module call, so it names no entity of its own (its records stay evidence under
 * `resource:<address>`).
 */
const TEMPLATE_LABELS = new Set(['this', 'self']);

/**
 * A name that differs per instance of a repeated resource (`for_each` with `name =
 * each.value.family`, `count` with `name = "worker-${count.index}"`): the block's label
 * (`"service"`, `"tasks"`) is then the name of none of the instances it stamps out.
 */
const PER_INSTANCE = /\beach\.(key|value)\b|\bcount\.index\b/;

/** True when the resource is repeated and its name argument differs per instance. */
function namedPerInstance(body: Obj, name: string): boolean {
  return (body.for_each !== undefined || body.count !== undefined) && PER_INSTANCE.test(name);
}

function mapResource(r: TfResource, wrapped: boolean): Mapped | null {
  const entry = CATALOG[r.type];
  if (!entry) return null;
  // A registry module's call (storageModules) is read for its settings only: the module's source
  // is not here, so it names no entity of its own (its records stay evidence).
  if (r.address.startsWith('module.'))
    return {
      entry,
      key: entityKey('resource', r.address),
      entityName: r.name,
      nameSource: 'module-call',
    };
  let parametric = false;
  let perInstance = false;
  for (const path of entry.names ?? ['name']) {
    const v = get(r.body, path);
    if (typeof v === 'string' && v !== '' && !isExpression(v)) {
      return { entry, key: entityKey(entry.kind, v), entityName: v, nameSource: 'argument' };
    }
    if (typeof v === 'string' && v !== '') parametric = true;
    if (typeof v === 'string' && namedPerInstance(r.body, v)) perInstance = true;
  }
  // A repeated resource named per instance: its label is no instance's name, and the instances'
  // names are not known before plan (its records stay evidence under `resource:<address>`).
  if (perInstance)
    return {
      entry,
      key: entityKey('resource', r.address),
      entityName: r.name,
      nameSource: 'per-instance',
    };
  // The one resource of a module that calls instantiate (wrapperDirs) is a template too.
  if (parametric && (TEMPLATE_LABELS.has(r.name) || wrapped))
    return {
      entry,
      key: entityKey('resource', r.address),
      entityName: r.name,
      nameSource: 'module-template',
    };
  return { entry, key: entityKey(entry.kind, r.name), entityName: r.name, nameSource: 'label' };
}

function declared(r: TfResource, index: Index): Evidence[] {
  const cloud = cloudOf(r.type);
  const base = {
    cloud,
    resource_type: r.type,
    resource_name: r.name,
    address: r.address,
    module_dir: r.dir,
  };
  const m = index.entity(r);
  const out: Evidence[] = [];
  if (m) {
    const engine =
      typeof m.entry.engine === 'function' ? m.entry.engine(r.body) : (m.entry.engine ?? null);
    const security = securityOf(r.type, r.body);
    out.push(
      evidence(r.file, r.span, {
        source: 'cloud',
        provider: PROVIDER,
        kind: `${m.entry.kind}-declared`,
        subject: m.key,
        summary: `Terraform ${r.address} declares ${engine ? `${engine} ` : ''}${m.entry.kind} ${m.entityName}${describeRisk(security)}`,
        attributes: {
          ...base,
          name: m.entityName,
          name_source: m.nameSource,
          // Stamped out per call (terraform-modules.ts): the instances carry its settings.
          ...(m.nameSource === 'module-template' && index.wraps(r.dir)
            ? { instantiated: true }
            : {}),
          engine,
          ...detailsOf(r.body),
          security,
        },
      }),
    );
    for (const [path, raw] of imagesOf(r.type, r.body)) {
      const image = parseImageRef(raw);
      if (!image) continue;
      out.push(
        evidence(r.file, attributeSpan(r.lines, r.span, path.split('.').pop() ?? path), {
          source: 'cloud',
          provider: PROVIDER,
          kind: 'image-reference',
          subject: m.key,
          relationship: 'uses_image',
          object: imageKey(image),
          summary: `Terraform ${r.address} runs image ${raw}`,
          attributes: {
            ...imageAttributes(image),
            image_tag: image.tag,
            cloud,
            address: r.address,
          },
        }),
      );
    }
    return out;
  }
  const companion = COMPANIONS[r.type];
  if (companion) {
    const parent = index.parentOf(r);
    const subject = index.keyOf(r);
    const security = securityOf(r.type, r.body);
    out.push(
      evidence(r.file, r.span, {
        source: 'cloud',
        provider: PROVIDER,
        kind: companion.evidenceKind,
        subject,
        summary: `Terraform ${r.address} configures ${
          Object.keys(security)
            .filter((k) => k !== 'unresolved')
            .join(', ') || 'settings'
        } of ${parent ? parent.address : r.name}${describeRisk(security)}`,
        attributes: { ...base, parent: parent?.address ?? null, security },
      }),
    );
  }
  return out;
}

function describeRisk(security: Obj): string {
  const risks: string[] = [];
  if (security.encryption_at_rest === false) risks.push('unencrypted at rest');
  if (security.publicly_accessible === true) risks.push('publicly accessible');
  if (security.open_to_world === true) risks.push('open to 0.0.0.0/0');
  if (security.tls_enforced === false) risks.push('without enforced TLS');
  return risks.length > 0 ? ` (${risks.join(', ')})` : '';
}

interface Ref {
  kind: 'resource' | 'module';
  address: string;
  attribute: string | null;
  text: string;
}

/** References inside the `${...}` parts of one value. */
function referencesIn(value: string): Ref[] {
  const out: Ref[] = [];
  for (const expr of interpolations(value)) {
    const re =
      /(?<![\w.-])(?:module\.([A-Za-z_][\w-]*)|(data\.)?([a-z][a-z0-9-]*_[a-z0-9_]+)\.([A-Za-z_][\w-]*))(?:\.([A-Za-z_]\w*))?/g;
    for (const m of expr.matchAll(re)) {
      if (m[1])
        out.push({
          kind: 'module',
          address: `module.${m[1]}`,
          attribute: m[5] ?? null,
          text: m[0],
        });
      else if (!m[2] && m[3] && m[4]) {
        out.push({
          kind: 'resource',
          address: `${m[3]}.${m[4]}`,
          attribute: m[5] ?? null,
          text: `${m[3]}.${m[4]}`,
        });
      }
    }
  }
  return out;
}

function interpolations(value: string): string[] {
  const out: string[] = [];
  let i = value.indexOf('${');
  while (i >= 0) {
    let depth = 0;
    let j = i + 2;
    for (; j < value.length; j++) {
      if (value[j] === '{') depth++;
      else if (value[j] === '}') {
        if (depth === 0) break;
        depth--;
      }
    }
    out.push(value.slice(i + 2, j));
    i = value.indexOf('${', j);
  }
  return out;
}

function strings(v: unknown, path: string, out: [string, string][]): void {
  if (typeof v === 'string') out.push([path, v]);
  else if (Array.isArray(v)) v.forEach((x) => strings(x, path, out));
  else if (isRecord(v))
    for (const [k, x] of Object.entries(v)) strings(x, path ? `${path}.${k}` : k, out);
}

const KNOWN_CLOUDS = new Set(['aws', 'google', 'azurerm']);

/** `resource-reference` for each other resource (or module) this one refers to. */
function references(r: TfResource, index: Index): Evidence[] {
  const values: [string, string][] = [];
  strings(r.body, '', values);
  const subject = index.keyOf(r);
  const subjectMapped = index.entity(r) !== null || COMPANIONS[r.type] !== undefined;
  const seen = new Map<string, { ref: Ref; target: TfResource | null; paths: string[] }>();
  for (const [path, v] of values) {
    for (const ref of referencesIn(v)) {
      const target = ref.kind === 'resource' ? index.find(ref.address, r.dir) : null;
      let object: string;
      if (ref.kind === 'module') object = entityKey('module', ref.address.slice('module.'.length));
      else if (target) object = index.keyOf(target);
      else if (KNOWN_CLOUDS.has(cloudOf(ref.address))) object = entityKey('resource', ref.address);
      else continue;
      const objectMapped = target !== null && index.entity(target) !== null;
      if (object === subject || (!subjectMapped && !objectMapped)) continue;
      const entry = seen.get(object) ?? { ref, target, paths: [] };
      if (!entry.paths.includes(path)) entry.paths.push(path);
      seen.set(object, entry);
    }
  }
  return [...seen.entries()].map(([object, { ref, target, paths }]) => {
    const esc = ref.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const line = findLine(r.lines, r.span, new RegExp(`(^|[^\\w.])${esc}\\b`)) ?? r.span.start;
    return evidence(
      r.file,
      { start: line, end: line },
      {
        source: 'cloud',
        provider: PROVIDER,
        kind: 'resource-reference',
        subject,
        relationship: 'references',
        object,
        summary: `Terraform ${r.address} references ${ref.address}${ref.attribute ? `.${ref.attribute}` : ''}`,
        attributes: {
          cloud: cloudOf(r.type),
          from: r.address,
          to: ref.address,
          to_declared: target !== null,
          referenced_attribute: ref.attribute,
          arguments: paths,
        },
      },
    );
  });
}

/** Secret-looking arguments (`password = "..."`) written as literals; the value is never kept. */
function literalSecrets(r: TfResource, index: Index): Evidence[] {
  const values: [string, string][] = [];
  strings(r.body, '', values);
  return values
    .filter(
      ([path, v]) =>
        (isSecretName(path.split('.').pop() ?? '') || looksLikeSecretValue(v)) && isLiteralValue(v),
    )
    .map(([path, v]) => {
      const arg = path.split('.').pop() ?? path;
      const placeholder = looksLikeSecretValue(v) ? null : placeholderReason(v);
      return evidence(r.file, attributeSpan(r.lines, r.span, arg), {
        source: 'cloud',
        provider: PROVIDER,
        kind: 'literal-secret',
        subject: index.keyOf(r),
        summary: `Terraform ${r.address} sets ${path} to a ${placeholder ? `placeholder (${placeholder})` : 'literal secret value'}`,
        attributes: {
          variable: path,
          source: 'terraform',
          address: r.address,
          ...(placeholder ? { placeholder } : {}),
        },
      });
    });
}
