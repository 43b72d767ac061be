/**
 * Azure Pipelines (`azure-pipelines.yml`): triggers, stages and jobs (deployment jobs and their
 * environments), pools and containers, tasks as `action-use` with their version, what the
 * well-known tasks and the script steps build, push and deploy. Templates are reported as gaps.
 */
import type { YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { Sink, pathKey, scriptOps, type JobRef, pipelineName } from './common';

import { taskOps } from './azure-tasks';
import { type YamlFile } from '../shared/yaml';

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
  for (const c of y.asSeq(y.get(y.asMap(y.get(root, 'resources')), 'containers'))?.items ?? []) {
    const alias = y.getString(y.asMap(c), 'container');
    const image = y.getString(y.asMap(c), 'image');
    if (alias && image) containers.set(alias, image);
  }
  const stagesNode = y.asSeq(y.get(root, 'stages'));
  const extendsTemplate = y.getString(y.asMap(y.get(root, 'extends')), 'template');
  const triggers = {
    trigger: y.entry(root, 'trigger') ? y.toJs(y.get(root, 'trigger')) : 'default (all branches)',
    pr: y.entry(root, 'pr') ? y.toJs(y.get(root, 'pr')) : 'default',
    schedules: (y.asSeq(y.get(root, 'schedules'))?.items ?? []).map(
      (s) => y.getString(y.asMap(s), 'cron') ?? null,
    ),
  };
  sink.add(
    y.nodeLines(root) ?? { start: 1, end: 1 },
    'pipeline-declared',
    pipeline.key,
    null,
    null,
    `Azure pipeline ${name}${stagesNode ? ` with stages ${stagesNode.items.map((s) => y.getString(y.asMap(s), 'stage') ?? '(template)').join(', ')}` : ''}`,
    {
      name,
      run_name: y.getString(root, 'name') ?? null,
      triggers,
      pool: y.toJs(y.get(root, 'pool')),
      extends: extendsTemplate ?? null,
      variable_groups: variableGroups(y, y.get(root, 'variables')),
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
    vars: readVariables(sink, y, y.get(root, 'variables'), pipeline),
  };
  if (stagesNode) {
    for (const s of stagesNode.items) {
      const stage = y.asMap(s);
      const stageName = y.getString(stage, 'stage');
      const template = y.getString(stage, 'template');
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
        y.asSeq(y.get(stage, 'jobs'))?.items ?? [],
        y.stringList(y.get(stage, 'dependsOn')),
      );
    }
  } else if (y.get(root, 'jobs')) {
    readJobs(ctx, null, y.asSeq(y.get(root, 'jobs'))?.items ?? [], []);
  } else if (y.get(root, 'steps')) {
    readJob(ctx, null, root, 'default', []);
  }
  return sink.output();
}

function variableGroups(y: YamlFile, node: unknown): string[] {
  return (y.asSeq(node)?.items ?? []).flatMap((v) => y.stringList(y.get(y.asMap(v), 'group')));
}

/** Variables as a map, or as a list of `{name, value}` / `{group}` / `{template}`. */
function readVariables(
  sink: Sink,
  y: YamlFile,
  node: unknown,
  owner: { key: string; label: string },
): Record<string, string> {
  const seq = y.asSeq(node);
  if (!seq) return sink.readEnv(y, node, owner, 'variables');
  const vars: Record<string, string> = {};
  for (const item of seq.items) {
    const m = y.asMap(item);
    const name = y.getString(m, 'name');
    if (!name) continue;
    sink.keepVariable(owner, vars, {
      name,
      value: y.getString(m, 'value'),
      lines: y.nodeLines(m) ?? { start: 1, end: 1 },
      scope: 'variables',
      phrase: 'variable',
    });
  }
  return vars;
}

function jobName(y: YamlFile, job: YAMLMap | null): string | undefined {
  return y.getString(job, 'job') ?? y.getString(job, 'deployment');
}

function readJobs(
  ctx: Ctx,
  stage: string | null,
  items: unknown[],
  stageDependsOn: string[],
): void {
  const { y } = ctx;
  for (const item of items) {
    const job = y.asMap(item);
    const template = y.getString(job, 'template');
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
  const envNode = y.get(job, 'environment');
  const rawEnv = y.scalarString(envNode) ?? y.getString(y.asMap(envNode), 'name');
  const environment = rawEnv?.split('.')[0] ?? null;
  const deployment = y.getString(job, 'deployment') !== undefined;
  const ref: JobRef = {
    key: jobKey(ctx, stage, name),
    label: `${deployment ? 'deployment job' : 'job'} ${name}${stage ? ` of stage ${stage}` : ''} in Azure pipeline ${ctx.name}`,
    environment,
  };
  const jobLines = y.nodeLines(job) ?? { start: 1, end: 1 };
  const lines =
    name === 'default' && !y.getString(job, 'job')
      ? y.entryLines(y.entry(job, 'steps')!)
      : jobLines;
  const containerRef =
    y.scalarString(y.get(job, 'container')) ??
    y.getString(y.asMap(y.get(job, 'container')), 'image');
  const dependsOn = y.stringList(y.get(job, 'dependsOn'));
  sink.jobDeclared(
    lines,
    ref,
    ctx.pipelineKey,
    `${ref.label}${environment ? ` deploys to environment ${environment}` : ''} runs on ${describePool(y.toJs(y.get(job, 'pool')))}`,
    {
      stage,
      kind: deployment ? 'deployment' : 'job',
      pool: y.toJs(y.get(job, 'pool')),
      container: containerRef ?? null,
      environment: rawEnv
        ? {
            name: environment,
            resource: rawEnv.includes('.')
              ? rawEnv.slice(rawEnv.indexOf('.') + 1)
              : (y.getString(y.asMap(envNode), 'resourceName') ?? null),
          }
        : null,
      depends_on: dependsOn,
      stage_depends_on: stageDependsOn,
      condition: y.getString(job, 'condition') ?? null,
      strategy: deployment
        ? (y.entries(y.asMap(y.get(job, 'strategy')))[0]?.key ?? null)
        : y.toJs(y.get(job, 'strategy')),
    },
  );
  for (const d of dependsOn) {
    const depNode = y.get(job, 'dependsOn');
    const item = y.asSeq(depNode)?.items.find((i) => y.scalarString(i) === d) ?? depNode;
    sink.add(
      y.nodeLines(item) ?? lines,
      'job-depends-on',
      ref.key,
      'depends_on',
      jobKey(ctx, stage, d),
      `${ref.label} depends on job ${d}`,
      { needs: d },
    );
  }
  const images: [string, unknown, string][] = [];
  const containerEntry = y.entry(job, 'container');
  if (containerRef && containerEntry) images.push([containerRef, containerEntry.pair, 'container']);
  for (const s of y.entries(y.asMap(y.get(job, 'services')))) {
    const r = y.scalarString(s.value);
    if (r) images.push([r, s.pair, 'service']);
  }
  for (const [r, pair, role] of images) {
    const img = parseImageRef(ctx.containers.get(r) ?? r);
    if (!img) continue;
    const at =
      y.entries(job).find((e) => e.pair === pair) ??
      y.entries(y.asMap(y.get(job, 'services'))).find((e) => e.pair === pair);
    sink.add(
      at ? y.entryLines(at) : lines,
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
  const vars = { ...ctx.vars, ...readVariables(sink, y, y.get(job, 'variables'), ref) };
  const strategy = y.entries(y.asMap(y.get(job, 'strategy')))[0];
  const hooks =
    deployment && strategy
      ? STRATEGY_HOOKS.map((h) => y.get(y.asMap(y.get(y.asMap(strategy.value), h)), 'steps'))
      : [];
  let deployed = false;
  for (const steps of [y.get(job, 'steps'), ...hooks]) {
    for (const step of y.asSeq(steps)?.items ?? [])
      deployed = readStep(ctx, ref, y.asMap(step), vars) || deployed;
  }
  const envEntry = y.entry(job, 'environment');
  if (!deployed && envEntry && environment) sink.emitEnvironmentDeploy(ref, y.entryLines(envEntry));
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
  const lines = y.nodeLines(step) ?? { start: 1, end: 1 };
  const label = y.getString(step, 'displayName') ?? y.getString(step, 'name') ?? null;
  const vars = { ...jobVars, ...sink.readEnv(y, y.get(step, 'env'), ref, 'step env') };
  let deployed = false;
  const template = y.getString(step, 'template');
  if (template)
    sink.gap(
      'azure_template_not_resolved',
      `step template ${template} in ${ref.label} is not read`,
    );
  for (const k of SCRIPT_KEYS) {
    for (const op of scriptOps(y, y.get(step, k), vars))
      deployed = sink.emitOp(ref, op, { step: label }) || deployed;
  }
  const task = y.getString(step, 'task');
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
  const inputs = y.asMap(y.get(step, 'inputs'));
  sink.readEnv(y, inputs, ref, 'task input');
  if (/^AzureCLI$|^AzurePowerShell$/i.test(taskName)) {
    for (const op of scriptOps(y, y.get(inputs, 'inlineScript') ?? y.get(inputs, 'Inline'), vars))
      deployed = sink.emitOp(ref, op, { step: label, task }) || deployed;
  }
  for (const op of taskOps(y, taskName, inputs, vars))
    deployed =
      sink.emitOp(ref, { ...op, line: 0, line_count: 1, lines }, { step: label, task }) || deployed;
  return deployed;
}
