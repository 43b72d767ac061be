/**
 * Azure Pipelines (`azure-pipelines.yml`): triggers, stages and jobs (deployment jobs and their
 * environments), pools and containers, tasks as `action-use` with their version, what the
 * well-known tasks and the script steps build, push and deploy. Templates are reported as gaps.
 */
import type { YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import {
  Sink,
  emitEnvironmentDeploy,
  emitOp,
  pathKey,
  readEnv,
  scriptOps,
  type JobRef,
  pipelineName,
  keepVariable,
} from './common';

import { taskOps } from './azure-tasks';
import {
  asMap,
  asSeq,
  entries,
  entry,
  entryLines,
  get,
  getString,
  nodeLines,
  scalarString,
  stringList,
  toJs,
  type YamlFile,
} from '../shared/yaml';

const PROVIDER = 'azure-pipelines';
const SCRIPT_KEYS = ['script', 'bash', 'pwsh', 'powershell'];
const STRATEGY_HOOKS = ['preDeploy', 'deploy', 'routeTraffic', 'postRouteTraffic'];

/** `azure-pipelines.yml` → `root`; `ci/azure-pipelines-deploy.yml` → `ci-deploy`. */
export function azurePipelineName(path: string): string {
  return pipelineName(path, (f) =>
    f.replace(/\.ya?ml$/i, '').replace(/[.-]?azure-pipelines?[.-]?/i, ''),
  );
}

interface Ctx {
  y: YamlFile;
  sink: Sink;
  name: string;
  pipelineKey: string;
  containers: Map<string, string>;
  vars: Record<string, string>;
}

/** Analyzes one Azure Pipelines file. */
export function analyzeAzurePipeline(file: SourceFile): AnalyzerOutput {
  const { sink, yaml } = Sink.forMapping(file, PROVIDER);
  if (!yaml) return sink.output();
  const { y, root } = yaml;
  const name = azurePipelineName(file.path);
  const pipeline = { key: pathKey('pipeline', PROVIDER, name), label: `Azure pipeline ${name}` };
  const containers = new Map<string, string>();
  for (const c of asSeq(y, get(y, asMap(y, get(y, root, 'resources')), 'containers'))?.items ??
    []) {
    const alias = getString(y, asMap(y, c), 'container');
    const image = getString(y, asMap(y, c), 'image');
    if (alias && image) containers.set(alias, image);
  }
  const stagesNode = asSeq(y, get(y, root, 'stages'));
  const extendsTemplate = getString(y, asMap(y, get(y, root, 'extends')), 'template');
  const triggers = {
    trigger: entry(y, root, 'trigger')
      ? toJs(y, get(y, root, 'trigger'))
      : 'default (all branches)',
    pr: entry(y, root, 'pr') ? toJs(y, get(y, root, 'pr')) : 'default',
    schedules: (asSeq(y, get(y, root, 'schedules'))?.items ?? []).map(
      (s) => getString(y, asMap(y, s), 'cron') ?? null,
    ),
  };
  sink.add(
    nodeLines(y, root) ?? { start: 1, end: 1 },
    'pipeline-declared',
    pipeline.key,
    null,
    null,
    `Azure pipeline ${name}${stagesNode ? ` with stages ${stagesNode.items.map((s) => getString(y, asMap(y, s), 'stage') ?? '(template)').join(', ')}` : ''}`,
    {
      name,
      run_name: getString(y, root, 'name') ?? null,
      triggers,
      pool: toJs(y, get(y, root, 'pool')),
      extends: extendsTemplate ?? null,
      variable_groups: variableGroups(y, get(y, root, 'variables')),
    },
  );
  if (extendsTemplate)
    sink.gap(
      'azure_template_not_resolved',
      `the pipeline extends template ${extendsTemplate}, which is not read; its stages and jobs are not analyzed`,
    );
  const ctx: Ctx = {
    y,
    sink,
    name,
    pipelineKey: pipeline.key,
    containers,
    vars: readVariables(sink, y, get(y, root, 'variables'), pipeline),
  };
  if (stagesNode) {
    for (const s of stagesNode.items) {
      const stage = asMap(y, s);
      const stageName = getString(y, stage, 'stage');
      const template = getString(y, stage, 'template');
      if (template || !stageName) {
        if (template)
          sink.gap(
            'azure_template_not_resolved',
            `stage template ${template} is not read; its jobs are not analyzed`,
          );
        continue;
      }
      readJobs(
        ctx,
        stageName,
        asSeq(y, get(y, stage, 'jobs'))?.items ?? [],
        stringList(y, get(y, stage, 'dependsOn')),
      );
    }
  } else if (get(y, root, 'jobs')) {
    readJobs(ctx, null, asSeq(y, get(y, root, 'jobs'))?.items ?? [], []);
  } else if (get(y, root, 'steps')) {
    readJob(ctx, null, root, 'default', []);
  }
  return sink.output();
}

function variableGroups(y: YamlFile, node: unknown): string[] {
  return (asSeq(y, node)?.items ?? []).flatMap((v) => stringList(y, get(y, asMap(y, v), 'group')));
}

/** Variables as a map, or as a list of `{name, value}` / `{group}` / `{template}`. */
function readVariables(
  sink: Sink,
  y: YamlFile,
  node: unknown,
  owner: { key: string; label: string },
): Record<string, string> {
  const seq = asSeq(y, node);
  if (!seq) return readEnv(sink, y, node, owner, 'variables');
  const vars: Record<string, string> = {};
  for (const item of seq.items) {
    const m = asMap(y, item);
    const name = getString(y, m, 'name');
    if (!name) continue;
    keepVariable(sink, owner, vars, {
      name,
      value: getString(y, m, 'value'),
      lines: nodeLines(y, m) ?? { start: 1, end: 1 },
      scope: 'variables',
      phrase: 'variable',
    });
  }
  return vars;
}

function jobName(y: YamlFile, job: YAMLMap | null): string | undefined {
  return getString(y, job, 'job') ?? getString(y, job, 'deployment');
}

function readJobs(
  ctx: Ctx,
  stage: string | null,
  items: unknown[],
  stageDependsOn: string[],
): void {
  const { y } = ctx;
  for (const item of items) {
    const job = asMap(y, item);
    const template = getString(y, job, 'template');
    if (template) {
      ctx.sink.gap(
        'azure_template_not_resolved',
        `job template ${template}${stage ? ` in stage ${stage}` : ''} is not read; its jobs are not analyzed`,
      );
      continue;
    }
    const name = jobName(y, job);
    if (job && name) readJob(ctx, stage, job, name, stageDependsOn);
  }
}

function jobKey(ctx: Ctx, stage: string | null, name: string): string {
  return stage
    ? pathKey('job', PROVIDER, ctx.name, stage, name)
    : pathKey('job', PROVIDER, ctx.name, name);
}

function readJob(
  ctx: Ctx,
  stage: string | null,
  job: YAMLMap,
  name: string,
  stageDependsOn: string[],
): void {
  const { y, sink } = ctx;
  const envNode = get(y, job, 'environment');
  const rawEnv = scalarString(y, envNode) ?? getString(y, asMap(y, envNode), 'name');
  const environment = rawEnv?.split('.')[0] ?? null;
  const deployment = getString(y, job, 'deployment') !== undefined;
  const ref: JobRef = {
    key: jobKey(ctx, stage, name),
    label: `${deployment ? 'deployment job' : 'job'} ${name}${stage ? ` of stage ${stage}` : ''} in Azure pipeline ${ctx.name}`,
    environment,
  };
  const jobLines = nodeLines(y, job) ?? { start: 1, end: 1 };
  const lines =
    name === 'default' && !getString(y, job, 'job')
      ? entryLines(y, entry(y, job, 'steps')!)
      : jobLines;
  const containerRef =
    scalarString(y, get(y, job, 'container')) ??
    getString(y, asMap(y, get(y, job, 'container')), 'image');
  const dependsOn = stringList(y, get(y, job, 'dependsOn'));
  sink.add(
    lines,
    'job-declared',
    ref.key,
    'part_of',
    ctx.pipelineKey,
    `${ref.label}${environment ? ` deploys to environment ${environment}` : ''} runs on ${describePool(toJs(y, get(y, job, 'pool')))}`,
    {
      stage,
      kind: deployment ? 'deployment' : 'job',
      pool: toJs(y, get(y, job, 'pool')),
      container: containerRef ?? null,
      environment: rawEnv
        ? {
            name: environment,
            resource: rawEnv.includes('.')
              ? rawEnv.slice(rawEnv.indexOf('.') + 1)
              : (getString(y, asMap(y, envNode), 'resourceName') ?? null),
          }
        : null,
      depends_on: dependsOn,
      stage_depends_on: stageDependsOn,
      condition: getString(y, job, 'condition') ?? null,
      strategy: deployment
        ? (entries(y, asMap(y, get(y, job, 'strategy')))[0]?.key ?? null)
        : toJs(y, get(y, job, 'strategy')),
    },
  );
  for (const d of dependsOn) {
    const depNode = get(y, job, 'dependsOn');
    const item = asSeq(y, depNode)?.items.find((i) => scalarString(y, i) === d) ?? depNode;
    sink.add(
      nodeLines(y, item) ?? lines,
      'job-depends-on',
      ref.key,
      'depends_on',
      jobKey(ctx, stage, d),
      `${ref.label} depends on job ${d}`,
      { needs: d },
    );
  }
  const images: [string, unknown, string][] = [];
  const containerEntry = entry(y, job, 'container');
  if (containerRef && containerEntry) images.push([containerRef, containerEntry.pair, 'container']);
  for (const s of entries(y, asMap(y, get(y, job, 'services')))) {
    const r = scalarString(y, s.value);
    if (r) images.push([r, s.pair, 'service']);
  }
  for (const [r, pair, role] of images) {
    const img = parseImageRef(ctx.containers.get(r) ?? r);
    if (!img) continue;
    const at =
      entries(y, job).find((e) => e.pair === pair) ??
      entries(y, asMap(y, get(y, job, 'services'))).find((e) => e.pair === pair);
    sink.add(
      at ? entryLines(y, at) : lines,
      'image-reference',
      ref.key,
      'uses_image',
      imageKey(img),
      `${ref.label} ${role === 'container' ? 'runs in container' : 'starts service'} ${img.raw}`,
      {
        role,
        ...(ctx.containers.has(r) ? { resource: r } : {}),
        ...imageAttributes(img),
      },
    );
  }
  const vars = { ...ctx.vars, ...readVariables(sink, y, get(y, job, 'variables'), ref) };
  const strategy = entries(y, asMap(y, get(y, job, 'strategy')))[0];
  const hooks =
    deployment && strategy
      ? STRATEGY_HOOKS.map((h) => get(y, asMap(y, get(y, asMap(y, strategy.value), h)), 'steps'))
      : [];
  let deployed = false;
  for (const steps of [get(y, job, 'steps'), ...hooks]) {
    for (const step of asSeq(y, steps)?.items ?? [])
      deployed = readStep(ctx, ref, asMap(y, step), vars) || deployed;
  }
  const envEntry = entry(y, job, 'environment');
  if (!deployed && envEntry && environment)
    emitEnvironmentDeploy(sink, ref, entryLines(y, envEntry));
}

function describePool(pool: unknown): string {
  if (typeof pool === 'string') return `pool ${pool}`;
  const p = pool as Record<string, unknown> | null;
  if (p && typeof p.vmImage === 'string') return p.vmImage;
  if (p && typeof p.name === 'string') return `pool ${p.name}`;
  return 'the default pool';
}

/** Reads one step; returns whether it deploys. */
function readStep(
  ctx: Ctx,
  ref: JobRef,
  step: YAMLMap | null,
  jobVars: Record<string, string>,
): boolean {
  const { y, sink } = ctx;
  if (!step) return false;
  const lines = nodeLines(y, step) ?? { start: 1, end: 1 };
  const label = getString(y, step, 'displayName') ?? getString(y, step, 'name') ?? null;
  const vars = { ...jobVars, ...readEnv(sink, y, get(y, step, 'env'), ref, 'step env') };
  let deployed = false;
  const template = getString(y, step, 'template');
  if (template)
    sink.gap(
      'azure_template_not_resolved',
      `step template ${template} in ${ref.label} is not read`,
    );
  for (const k of SCRIPT_KEYS) {
    for (const op of scriptOps(y, get(y, step, k), vars))
      deployed = emitOp(sink, ref, op, { step: label }) || deployed;
  }
  const task = getString(y, step, 'task');
  if (!task) return deployed;
  const at = task.lastIndexOf('@');
  const taskName = at > 0 ? task.slice(0, at) : task;
  const version = at > 0 ? task.slice(at + 1) : null;
  sink.add(
    lines,
    'action-use',
    ref.key,
    'uses',
    pathKey('task', taskName),
    `step${label ? ` ${label}` : ''} of ${ref.label} uses task ${task} (${version ? `major version ${version}, minor versions float` : 'no version'})`,
    {
      uses: task,
      ref: version,
      pin: version ? 'major' : 'none',
      pinned: false,
      first_party: !taskName.includes('.'),
      step: label,
    },
  );
  const inputs = asMap(y, get(y, step, 'inputs'));
  readEnv(sink, y, inputs, ref, 'task input');
  if (/^AzureCLI$|^AzurePowerShell$/i.test(taskName)) {
    for (const op of scriptOps(y, get(y, inputs, 'inlineScript') ?? get(y, inputs, 'Inline'), vars))
      deployed = emitOp(sink, ref, op, { step: label, task }) || deployed;
  }
  for (const op of taskOps(y, taskName, inputs, vars))
    deployed =
      emitOp(sink, ref, { ...op, line: 0, line_count: 1, lines }, { step: label, task }) ||
      deployed;
  return deployed;
}
