/**
 * GitLab CI (`.gitlab-ci.yml`, `*.gitlab-ci.yml`): stages, jobs with `extends` resolved,
 * images and services, needs, includes (local ones read when present, the rest reported as
 * gaps), environments, rules, and what job scripts build, push and deploy.
 */
import picomatch from 'picomatch';
import { isSeq, type Node, type YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { parseYamlMapping, type Entry, type YamlFile } from '../shared/yaml';
import { Sink, pathKey, scriptOps, type JobRef, pipelineName } from './common';

const PROVIDER = 'gitlab-ci';
const GLOBAL_KEYS = new Set([
  ...['default', 'include', 'stages', 'variables', 'workflow', 'image', 'services', 'cache'],
  ...['before_script', 'after_script', 'types', 'spec'],
]);
const DEFAULT_STAGES = ['.pre', 'build', 'test', 'deploy', '.post'];
const NOT_DEPLOYING = new Set(['stop', 'prepare', 'access', 'verify']);

/** `.gitlab-ci.yml` → `root`; `services/api/.gitlab-ci.yml` → `services-api`; `ci/deploy.gitlab-ci.yml` → `ci-deploy`. */
export function gitlabPipelineName(path: string): string {
  return pipelineName(path, (f) => f.replace(/\.?gitlab-ci\.ya?ml$/, ''));
}

/** One parsed file of the pipeline (the root or a local include) and its evidence. */
interface Source {
  y: YamlFile;
  root: YAMLMap;
  sink: Sink;
}

interface Def {
  src: Source;
  entry: Entry;
  map: YAMLMap;
}

interface Located {
  src: Source;
  entry: Entry;
  /** The job or template the key came from. */
  from: string;
}

export interface GitlabResult {
  output: AnalyzerOutput;
  /** Local files pulled in by `include:`, so they are not analyzed again as pipelines. */
  included: string[];
}

/** Analyzes one GitLab CI file, reading its local includes from `files` when present. */
export function analyzeGitlabCi(
  file: SourceFile,
  files: ReadonlyMap<string, SourceFile>,
): GitlabResult {
  const { sink: rootSink, yaml: parsed } = Sink.forMapping(file, PROVIDER, {
    allowHeaderDocument: true,
  });
  if (!parsed) return { output: rootSink.output(), included: [] };
  const name = gitlabPipelineName(file.path);
  const pipeline = { key: pathKey('pipeline', PROVIDER, name), label: `GitLab pipeline ${name}` };
  const main: Source = { y: parsed.y, root: parsed.root, sink: rootSink };
  const sources: Source[] = [];
  const seen = new Set([file.path]);
  const unresolved = readIncludes(main, files, pipeline.key, sources, seen);
  sources.push(main);

  const defs = new Map<string, Def>();
  for (const src of sources) {
    for (const e of src.y.entries(src.root)) {
      const map = src.y.asMap(e.value);
      if (map && !GLOBAL_KEYS.has(e.key)) defs.set(e.key, { src, entry: e, map });
    }
  }
  const globals = globalEntries(sources);
  const stagesEntry = globals.get('stages');
  const stages = stagesEntry
    ? stagesEntry.src.y.stringList(stagesEntry.entry.value)
    : DEFAULT_STAGES;
  const vars = globals.get('variables');
  const globalVars = vars
    ? vars.src.sink.readEnv(vars.src.y, vars.entry.value, pipeline, 'global variables')
    : {};
  const workflowRules = globals.get('workflow');
  rootSink.add(
    main.y.nodeLines(main.root) ?? { start: 1, end: 1 },
    'pipeline-declared',
    pipeline.key,
    null,
    null,
    `GitLab CI pipeline ${name} with stages ${stages.join(', ')}`,
    {
      name,
      stages,
      stages_declared: stagesEntry !== undefined,
      workflow_rules: workflowRules
        ? rulesSummary(
            workflowRules.src.y,
            workflowRules.src.y.get(workflowRules.src.y.asMap(workflowRules.entry.value), 'rules'),
          )
        : null,
      includes: unresolved.map((u) => u.location),
      unresolved_includes: unresolved.filter((u) => !u.resolved).length,
    },
  );

  const ctx: PipelineContext = {
    defs,
    globals,
    pipelineKey: pipeline.key,
    name,
    globalVars,
    hasUnresolvedIncludes: unresolved.some((u) => !u.resolved),
  };
  for (const [jobName, def] of defs) if (!jobName.startsWith('.')) readJob(ctx, jobName, def);
  const output: AnalyzerOutput = {
    evidence: sources.flatMap((s) => s.sink.evidence),
    gaps: sources.flatMap((s) => s.sink.gaps),
  };
  return { output, included: [...seen].filter((p) => p !== file.path).sort() };
}

interface IncludeInfo {
  location: string;
  resolved: boolean;
}

/** Records every include; reads local ones that are in `files`, depth first, once each. */
function readIncludes(
  src: Source,
  files: ReadonlyMap<string, SourceFile>,
  pipelineKey: string,
  into: Source[],
  seen: Set<string>,
): IncludeInfo[] {
  const { y } = src;
  const node = y.get(src.root, 'include');
  const items = y.asSeq(node)?.items ?? (node ? [node] : []);
  const infos: IncludeInfo[] = [];
  for (const item of items) {
    const lines = y.nodeLines(y.deref(item)) ?? { start: 1, end: 1 };
    const m = y.asMap(item);
    const str = y.scalarString(item);
    let type: string;
    let location: string;
    if (str !== undefined) {
      type = /^https?:\/\//.test(str) ? 'remote' : 'local';
      location = str;
    } else if (m) {
      type =
        ['local', 'remote', 'template', 'project', 'component'].find((k) => y.get(m, k) !== null) ??
        'unknown';
      location =
        type === 'project'
          ? `${y.getString(m, 'project') ?? ''}:${y.stringList(y.get(m, 'file')).join(',')}`
          : (y.getString(m, type) ?? '');
    } else continue;
    let resolved = false;
    if (type === 'local') {
      const pattern = location.replace(/^\//, '');
      const matches = [...files.keys()].filter(
        (p) => p === pattern || (/[*?[]/.test(pattern) && picomatch.isMatch(p, pattern)),
      );
      for (const path of matches.sort()) {
        const f = files.get(path);
        if (!f || seen.has(path)) continue;
        seen.add(path);
        const parsed = parseYamlMapping(f);
        if (!parsed.ok) {
          src.sink.gaps.push(parsed.gap);
          continue;
        }
        const inc: Source = { y: parsed.y, root: parsed.root, sink: new Sink(f, PROVIDER) };
        infos.push(...readIncludes(inc, files, pipelineKey, into, seen));
        into.push(inc);
      }
      resolved = matches.length > 0;
    }
    infos.push({ location: `${type}:${location}`, resolved });
    src.sink.add(
      lines,
      'pipeline-include',
      pipelineKey,
      null,
      null,
      `GitLab pipeline includes ${type} ${location}${resolved ? '' : ' (not read)'}`,
      {
        include_type: type,
        location,
        ref: y.getString(m, 'ref') ?? null,
        resolved,
      },
    );
    if (!resolved) {
      src.sink.gap(
        'gitlab_include_not_resolved',
        type === 'local'
          ? `local include ${location} is not among the files read; jobs and templates it defines are not analyzed`
          : `${type} include ${location} cannot be read offline; jobs and templates it defines are not analyzed`,
      );
    }
  }
  return infos;
}

/** Global keywords (`stages`, `variables`, `default`, `image`...), the root file winning over includes. */
function globalEntries(sources: Source[]): Map<string, Located> {
  const out = new Map<string, Located>();
  for (const src of sources) {
    for (const e of src.y.entries(src.root))
      if (GLOBAL_KEYS.has(e.key)) out.set(e.key, { src, entry: e, from: '(global)' });
  }
  return out;
}

interface PipelineContext {
  defs: Map<string, Def>;
  globals: Map<string, Located>;
  pipelineKey: string;
  name: string;
  globalVars: Record<string, string>;
  hasUnresolvedIncludes: boolean;
}

/** A job's keys after `extends` (templates first, later ones and the job itself winning). */
function resolveJob(
  ctx: PipelineContext,
  name: string,
  seen: Set<string>,
  missing: string[],
): Map<string, Located> {
  const def = ctx.defs.get(name);
  const out = new Map<string, Located>();
  if (!def || seen.has(name)) return out;
  seen.add(name);
  const { y } = def.src;
  for (const parent of y.stringList(y.get(def.map, 'extends'))) {
    if (!ctx.defs.has(parent)) missing.push(parent);
    for (const [k, v] of resolveJob(ctx, parent, seen, missing))
      if (k !== 'variables') out.set(k, v);
  }
  for (const e of y.entries(def.map)) out.set(e.key, { src: def.src, entry: e, from: name });
  return out;
}

/** Variable maps along the extends chain, outermost template first. */
function variableChain(ctx: PipelineContext, name: string, seen = new Set<string>()): Located[] {
  const def = ctx.defs.get(name);
  if (!def || seen.has(name)) return [];
  seen.add(name);
  const { y } = def.src;
  const parents = y
    .stringList(y.get(def.map, 'extends'))
    .flatMap((p) => variableChain(ctx, p, seen));
  const own = y.entries(def.map).find((e) => e.key === 'variables');
  return own ? [...parents, { src: def.src, entry: own, from: name }] : parents;
}

function rulesSummary(y: YamlFile, node: unknown): unknown[] | null {
  const seq = y.asSeq(node);
  if (!seq) return null;
  return seq.items.map((r) => {
    const m = y.asMap(r);
    const out: Record<string, unknown> = {};
    for (const k of ['if', 'when', 'changes', 'exists']) {
      const v = y.get(m, k);
      if (v) out[k] = k === 'if' || k === 'when' ? y.scalarString(v) : y.stringList(v);
    }
    return out;
  });
}

function imageOf(y: YamlFile, node: unknown): string | undefined {
  return y.scalarString(node) ?? y.getString(y.asMap(node), 'name');
}

function readJob(ctx: PipelineContext, name: string, def: Def): void {
  const missing: string[] = [];
  const keys = resolveJob(ctx, name, new Set(), missing);
  const { src } = def;
  const { y, sink } = src;
  for (const m of missing) {
    sink.gap(
      'gitlab_extends_not_resolved',
      `job ${name} extends ${m}, which is not defined in the files read${ctx.hasUnresolvedIncludes ? ' (it may come from an include that was not read)' : ''}`,
    );
  }
  const withDefault = (k: string): Located | undefined => {
    const own = keys.get(k);
    if (own) return own;
    const dflt = ctx.globals.get('default');
    const fromDefault = dflt
      ? dflt.src.y.entries(dflt.src.y.asMap(dflt.entry.value)).find((e) => e.key === k)
      : undefined;
    if (fromDefault && dflt) return { src: dflt.src, entry: fromDefault, from: 'default' };
    return ctx.globals.get(k);
  };
  const value = (l: Located | undefined): Node | null => l?.entry.value ?? null;
  const str = (k: string): string | undefined => {
    const l = keys.get(k);
    return l ? l.src.y.scalarString(l.entry.value) : undefined;
  };
  const imageLoc = withDefault('image');
  const image = imageLoc ? imageOf(imageLoc.src.y, imageLoc.entry.value) : undefined;
  const envLoc = keys.get('environment');
  const envMap = envLoc ? envLoc.src.y.asMap(envLoc.entry.value) : null;
  const environment = envLoc
    ? (envLoc.src.y.scalarString(envLoc.entry.value) ?? envLoc.src.y.getString(envMap, 'name'))
    : undefined;
  const envAction = envLoc ? (envLoc.src.y.getString(envMap, 'action') ?? 'start') : null;
  const servicesLoc = withDefault('services');
  const serviceItems = servicesLoc
    ? (servicesLoc.src.y.asSeq(servicesLoc.entry.value)?.items ?? [])
    : [];
  const needsLoc = keys.get('needs');
  const needItems = needsLoc ? (needsLoc.src.y.asSeq(needsLoc.entry.value)?.items ?? []) : [];
  const needName = (l: Located, n: unknown): string | undefined =>
    l.src.y.scalarString(n) ?? l.src.y.getString(l.src.y.asMap(n), 'job');
  const stage = str('stage') ?? 'test';
  const inherited = [...new Set([...keys.values()].map((l) => l.from).filter((f) => f !== name))];
  const ref: JobRef = {
    key: pathKey('job', PROVIDER, ctx.name, name),
    label: `job ${name} in GitLab pipeline ${ctx.name}`,
    environment: environment ?? null,
  };
  const js = (k: string): unknown => {
    const l = keys.get(k);
    return l ? l.src.y.toJs(l.entry.value) : null;
  };
  sink.jobDeclared(
    y.entryLines(def.entry),
    ref,
    ctx.pipelineKey,
    `${ref.label} runs in stage ${stage}${image ? ` with image ${image}` : ''}${environment ? ` for environment ${environment}` : ''}`,
    {
      stage,
      image: image ?? null,
      image_from: imageLoc?.from ?? null,
      services: serviceItems.map((s) => imageOf(servicesLoc?.src.y ?? y, s) ?? null),
      needs: needsLoc ? needItems.map((n) => needName(needsLoc, n) ?? null) : null,
      extends: y.stringList(y.get(def.map, 'extends')),
      inherited_from: inherited,
      environment: environment
        ? {
            name: environment,
            url: envLoc ? (envLoc.src.y.getString(envMap, 'url') ?? null) : null,
            action: envAction,
          }
        : null,
      when: str('when') ?? null,
      rules: keys.get('rules')
        ? rulesSummary(keys.get('rules')!.src.y, value(keys.get('rules')))
        : null,
      only: js('only'),
      except: js('except'),
      tags: js('tags'),
      allow_failure: js('allow_failure'),
      trigger: js('trigger'),
    },
  );
  if (needsLoc) {
    for (const n of needItems) {
      const need = needName(needsLoc, n);
      if (!need) continue;
      needsLoc.src.sink.add(
        needsLoc.src.y.nodeLines(needsLoc.src.y.deref(n)) ??
          needsLoc.src.y.entryLines(needsLoc.entry),
        'job-depends-on',
        ref.key,
        'depends_on',
        pathKey('job', PROVIDER, ctx.name, need),
        `${ref.label} needs job ${need}`,
        { needs: need },
      );
    }
  }
  if (imageLoc && image) imageEvidence(ref, name, imageLoc, imageLoc.entry, image, 'job');
  for (const s of serviceItems) {
    const img = servicesLoc ? imageOf(servicesLoc.src.y, s) : undefined;
    if (servicesLoc && img) imageEvidence(ref, name, servicesLoc, s, img, 'service');
  }
  let vars = { ...ctx.globalVars };
  for (const l of variableChain(ctx, name))
    vars = { ...vars, ...l.src.sink.readEnv(l.src.y, l.entry.value, ref, 'job variables') };
  let deployed = false;
  for (const k of ['before_script', 'script', 'after_script']) {
    const loc = withDefault(k);
    if (!loc) continue;
    for (const item of scriptItems(ctx, loc.src, loc.entry.value, 0)) {
      for (const op of scriptOps(item.src.y, item.node, vars)) {
        deployed =
          item.src.sink.emitOp(ref, op, {
            script: k,
            ...(loc.from !== name ? { inherited_from: loc.from } : {}),
          }) || deployed;
      }
    }
  }
  if (!deployed && envLoc && environment && !NOT_DEPLOYING.has(envAction ?? '')) {
    envLoc.src.sink.emitEnvironmentDeploy(ref, envLoc.src.y.entryLines(envLoc.entry), {
      url: envLoc.src.y.getString(envMap, 'url') ?? null,
    });
  }
}

function imageEvidence(
  ref: JobRef,
  job: string,
  loc: Located,
  node: Entry | unknown,
  raw: string,
  role: 'job' | 'service',
): void {
  const img = parseImageRef(raw);
  if (!img) return;
  const { y, sink } = loc.src;
  const lines = isEntry(node)
    ? y.entryLines(node)
    : (y.nodeLines(y.deref(node)) ?? y.entryLines(loc.entry));
  const what = role === 'job' ? `runs in image ${img.raw}` : `starts service ${img.raw}`;
  sink.add(lines, 'image-reference', ref.key, 'uses_image', imageKey(img), `${ref.label} ${what}`, {
    role,
    ...(loc.from !== job ? { inherited_from: loc.from } : {}),
    ...imageAttributes(img),
  });
}

function isEntry(x: unknown): x is Entry {
  return typeof x === 'object' && x !== null && 'pair' in x && 'key' in x;
}

/** Script lines as scalar nodes, with anchors flattened and `!reference [job, key]` followed. */
function scriptItems(
  ctx: PipelineContext,
  src: Source,
  node: unknown,
  depth: number,
): { src: Source; node: Node }[] {
  const n = src.y.deref(node);
  if (!n || depth > 5) return [];
  if (isSeq(n) && n.tag === '!reference') {
    const [job, ...path] = src.y.stringList(n);
    const def = job ? ctx.defs.get(job) : undefined;
    if (!def) return [];
    let target: Node | null = def.map;
    for (const k of path) target = def.src.y.get(def.src.y.asMap(target), k);
    return scriptItems(ctx, def.src, target, depth + 1);
  }
  if (isSeq(n)) return n.items.flatMap((i) => scriptItems(ctx, src, i, depth + 1));
  return src.y.scalarString(n) !== undefined ? [{ src, node: n }] : [];
}
