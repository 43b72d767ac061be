/**
 * CircleCI (`.circleci/config.yml`): orbs with their version pin state, executors and job
 * images, jobs and the workflows that run them (requires, contexts, filters), orb commands
 * and orb jobs, custom commands, and what `run` steps build, push and deploy.
 */
import type { Node, YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import type { Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { dirname } from '../shared/paths';
import { type Entry, type YamlFile } from '../shared/yaml';
import { Sink, pathKey, scriptOps, pipelineName, type JobRef } from './common';
import { orbOps } from './circleci-orbs';

const PROVIDER = 'circleci';

export type OrbPin = 'exact' | 'range' | 'volatile' | 'dev' | 'inline';

interface Orb {
  alias: string;
  name: string;
  ref: string | null;
  pin: OrbPin;
}

/** `circleci/node@5.1.0` is immutable once published; `@5`, `@5.1`, `@volatile` and `dev:` float. */
export function parseOrb(alias: string, value: string | undefined): Orb {
  if (value === undefined) return { alias, name: alias, ref: null, pin: 'inline' };
  const at = value.lastIndexOf('@');
  const name = at > 0 ? value.slice(0, at) : value;
  const ref = at > 0 ? value.slice(at + 1) : null;
  const pin: OrbPin =
    !ref || ref === 'volatile'
      ? 'volatile'
      : ref.startsWith('dev:')
        ? 'dev'
        : /^\d+\.\d+\.\d+$/.test(ref)
          ? 'exact'
          : 'range';
  return { alias, name, ref, pin };
}

const PIN_PHRASE: Record<OrbPin, string> = {
  exact: 'exact version',
  range: 'version range, not pinned to a release',
  volatile: 'volatile, not pinned',
  dev: 'dev version, mutable',
  inline: 'inline orb in this file',
};

interface Ctx {
  y: YamlFile;
  sink: Sink;
  name: string;
  pipelineKey: string;
  orbs: Map<string, Orb>;
  jobs: YAMLMap | null;
  executors: YAMLMap | null;
  commands: YAMLMap | null;
}

/** Analyzes one CircleCI config. */
export function analyzeCircleci(file: SourceFile): AnalyzerOutput {
  const { sink, yaml } = Sink.forMapping(file, PROVIDER);
  if (!yaml) return sink.output();
  const { y, root } = yaml;
  // `.circleci/config.yml`: the directory holding `.circleci` names the pipeline.
  const name = pipelineName(dirname(file.path), () => '');
  const pipelineKey = pathKey('pipeline', PROVIDER, name);
  const orbEntries = y.entries(y.asMap(y.get(root, 'orbs')));
  const orbs = new Map(orbEntries.map((e) => [e.key, parseOrb(e.key, y.scalarString(e.value))]));
  const workflows = y.entries(y.asMap(y.get(root, 'workflows'))).filter((w) => w.key !== 'version');
  const ctx: Ctx = {
    y,
    sink,
    name,
    pipelineKey,
    orbs,
    jobs: y.asMap(y.get(root, 'jobs')),
    executors: y.asMap(y.get(root, 'executors')),
    commands: y.asMap(y.get(root, 'commands')),
  };
  const workflowSummary = workflows.map((w) => ({
    name: w.key,
    jobs: workflowJobs(y, w).map((j) => j.name),
    triggers: y.toJs(y.get(y.asMap(w.value), 'triggers')),
  }));
  sink.add(
    y.nodeLines(root) ?? { start: 1, end: 1 },
    'pipeline-declared',
    pipelineKey,
    null,
    null,
    `CircleCI config ${name} with workflows ${workflowSummary.map((w) => w.name).join(', ') || '(none)'}`,
    {
      version: y.getString(root, 'version') ?? null,
      setup: y.getString(root, 'setup') === 'true',
      orbs: Object.fromEntries(
        [...orbs.values()].map((o) => [o.alias, o.ref ? `${o.name}@${o.ref}` : o.name]),
      ),
      workflows: workflowSummary,
    },
  );
  for (const e of orbEntries) {
    const orb = orbs.get(e.key);
    if (!orb) continue;
    const shown = orb.ref ? `${orb.name}@${orb.ref}` : orb.name;
    sink.add(
      y.entryLines(e),
      'action-use',
      pipelineKey,
      'uses',
      pathKey('orb', orb.pin === 'inline' ? `${name}/${orb.alias}` : orb.name),
      `CircleCI config ${name} uses orb ${shown} (${PIN_PHRASE[orb.pin]})`,
      {
        orb: orb.alias,
        uses: shown,
        ref: orb.ref,
        pin: orb.pin,
        pinned: orb.pin === 'exact' || orb.pin === 'inline',
        first_party: orb.name.startsWith('circleci/'),
      },
    );
  }
  const usage = new Map<string, WorkflowJob[]>();
  for (const w of workflows)
    for (const j of workflowJobs(y, w)) usage.set(j.name, [...(usage.get(j.name) ?? []), j]);
  for (const e of y.entries(ctx.jobs)) readJob(ctx, e, usage.get(e.key) ?? []);
  for (const [jobName, uses] of usage) {
    if (!y.get(ctx.jobs, jobName) && jobName.includes('/')) readOrbJob(ctx, jobName, uses);
  }
  for (const w of workflows) for (const j of workflowJobs(y, w)) readRequires(ctx, j);
  return sink.output();
}

interface WorkflowJob {
  workflow: string;
  /** The job definition (or orb job) run. */
  name: string;
  /** `name:` given in the workflow, or the job name. */
  alias: string;
  node: Node;
  params: YAMLMap | null;
}

function workflowJobs(y: YamlFile, w: Entry): WorkflowJob[] {
  const items = y.asSeq(y.get(y.asMap(w.value), 'jobs'))?.items ?? [];
  return items.flatMap((item) => {
    const s = y.scalarString(item);
    if (s) return [{ workflow: w.key, name: s, alias: s, node: item as Node, params: null }];
    const first = y.entries(y.asMap(item))[0];
    if (!first) return [];
    const params = y.asMap(first.value);
    return [
      {
        workflow: w.key,
        name: first.key,
        alias: y.getString(params, 'name') ?? first.key,
        node: item as Node,
        params,
      },
    ];
  });
}

function jobKey(ctx: Ctx, name: string): string {
  return pathKey('job', PROVIDER, ctx.name, name);
}

function usageAttributes(y: YamlFile, uses: WorkflowJob[]): Record<string, unknown> {
  return {
    workflows: [...new Set(uses.map((u) => u.workflow))],
    contexts: [...new Set(uses.flatMap((u) => y.stringList(y.get(u.params, 'context'))))].sort(),
    filters: uses.map((u) => y.toJs(y.get(u.params, 'filters'))).find((f) => f !== null) ?? null,
  };
}

function readJob(ctx: Ctx, e: Entry, uses: WorkflowJob[]): void {
  const { y, sink } = ctx;
  const job = y.asMap(e.value);
  if (!job) return;
  const ref: JobRef = {
    key: jobKey(ctx, e.key),
    label: `job ${e.key} in CircleCI config ${ctx.name}`,
    environment: null,
  };
  const executorName =
    y.scalarString(y.get(job, 'executor')) ?? y.getString(y.asMap(y.get(job, 'executor')), 'name');
  const executor = executorName ? y.asMap(y.get(ctx.executors, executorName)) : null;
  const imagesFrom = y.get(job, 'docker') ? job : executor;
  const images = y.asSeq(y.get(imagesFrom, 'docker'))?.items ?? [];
  const imageNames = images.map((i) => y.getString(y.asMap(i), 'image') ?? null);
  const machine = y.toJs(y.get(job, 'machine') ?? y.get(executor, 'machine'));
  sink.jobDeclared(
    y.entryLines(e),
    ref,
    ctx.pipelineKey,
    `${ref.label} runs ${imageNames[0] ? `in ${imageNames[0]}` : executorName ? `on executor ${executorName}` : machine ? 'on a machine executor' : 'on an unspecified executor'}`,
    {
      executor: executorName ?? null,
      images: imageNames,
      machine,
      resource_class:
        y.getString(job, 'resource_class') ?? y.getString(executor, 'resource_class') ?? null,
      parallelism: y.toJs(y.get(job, 'parallelism')),
      ...usageAttributes(y, uses),
    },
  );
  if (executorName?.includes('/'))
    orbUse(ctx, ref, executorName, y.entryLines(y.entry(job, 'executor') ?? e), 'executor');
  images.forEach((item, i) => {
    const m = y.asMap(item);
    const raw = y.getString(m, 'image');
    const img = raw ? parseImageRef(raw) : null;
    if (!img || !m) return;
    const role = i === 0 ? 'primary' : 'service';
    sink.add(
      y.nodeLines(m) ?? y.entryLines(e),
      'image-reference',
      ref.key,
      'uses_image',
      imageKey(img),
      `${ref.label} ${role === 'primary' ? 'runs in' : 'starts service container'} ${img.raw}`,
      {
        role,
        ...(imagesFrom === executor ? { executor: executorName } : {}),
        ...imageAttributes(img),
      },
    );
    sink.readEnv(y, y.get(m, 'environment'), ref, 'container env');
  });
  const vars = {
    ...sink.readEnv(y, y.get(executor, 'environment'), ref, 'executor env'),
    ...sink.readEnv(y, y.get(job, 'environment'), ref, 'job env'),
  };
  readSteps(ctx, ref, y.get(job, 'steps'), vars, 0);
}

function orbUse(
  ctx: Ctx,
  ref: JobRef,
  used: string,
  lines: Span,
  what: 'command' | 'job' | 'executor',
): void {
  const alias = used.slice(0, used.indexOf('/'));
  const orb = ctx.orbs.get(alias);
  const shown = orb?.ref ? `${orb.name}@${orb.ref}` : (orb?.name ?? alias);
  ctx.sink.add(
    lines,
    'action-use',
    ref.key,
    'uses',
    pathKey('orb', orb && orb.pin !== 'inline' ? orb.name : `${ctx.name}/${alias}`),
    `${ref.label} uses orb ${what} ${used} from ${shown}${orb ? ` (${PIN_PHRASE[orb.pin]})` : ' (orb not declared)'}`,
    {
      orb: alias,
      [what]: used.slice(alias.length + 1),
      uses: shown,
      ref: orb?.ref ?? null,
      pin: orb?.pin ?? null,
      pinned: orb ? orb.pin === 'exact' || orb.pin === 'inline' : false,
      first_party: orb?.name.startsWith('circleci/') ?? false,
    },
  );
}

/** Steps of a job or custom command; `when`/`unless` bodies and custom commands are followed. */
function readSteps(
  ctx: Ctx,
  ref: JobRef,
  node: unknown,
  vars: Record<string, string>,
  depth: number,
): void {
  const { y, sink } = ctx;
  if (depth > 4) return;
  for (const item of y.asSeq(node)?.items ?? []) {
    const lines = y.nodeLines(item) ?? { start: 1, end: 1 };
    const name = y.scalarString(item) ?? y.entries(y.asMap(item))[0]?.key;
    if (!name) continue;
    const body = y.get(y.asMap(item), name);
    const params = y.asMap(body);
    if (name === 'run') {
      const command = y.scalarString(body) === undefined ? y.get(params, 'command') : body;
      const stepVars = {
        ...vars,
        ...sink.readEnv(y, y.get(params, 'environment'), ref, 'step env'),
      };
      for (const op of scriptOps(y, command, stepVars))
        sink.emitOp(ref, op, { step: y.getString(params, 'name') ?? null });
    } else if (name === 'when' || name === 'unless') {
      readSteps(ctx, ref, y.get(params, 'steps'), vars, depth + 1);
    } else if (name.includes('/')) {
      orbUse(ctx, ref, name, lines, 'command');
      for (const op of orbOps(y, name, params, vars))
        sink.emitOp(ref, { ...op, line: 0, line_count: 1, lines }, { orb_command: name });
    } else {
      const command = y.asMap(y.get(ctx.commands, name));
      if (command) readSteps(ctx, ref, y.get(command, 'steps'), vars, depth + 1);
    }
  }
}

/** Jobs that come from an orb and are run straight from a workflow (`aws-ecr/build_and_push_image`). */
function readOrbJob(ctx: Ctx, name: string, uses: WorkflowJob[]): void {
  const { y, sink } = ctx;
  for (const u of uses) {
    const ref: JobRef = {
      key: jobKey(ctx, u.alias),
      label: `orb job ${u.alias} in CircleCI config ${ctx.name}`,
      environment: null,
    };
    const lines = y.nodeLines(u.node) ?? { start: 1, end: 1 };
    sink.jobDeclared(lines, ref, ctx.pipelineKey, `${ref.label} runs orb job ${name}`, {
      orb_job: name,
      ...usageAttributes(y, [u]),
    });
    orbUse(ctx, ref, name, lines, 'job');
    for (const op of orbOps(y, name, u.params, {}))
      sink.emitOp(ref, { ...op, line: 0, line_count: 1, lines }, { orb_job: name });
  }
}

function readRequires(ctx: Ctx, j: WorkflowJob): void {
  const { y } = ctx;
  const requires = y.get(j.params, 'requires');
  const items = y.asSeq(requires)?.items ?? (requires ? [requires] : []);
  for (const r of items) {
    const need = y.scalarString(r);
    if (!need) continue;
    const ref = jobKey(ctx, j.alias);
    ctx.sink.add(
      y.nodeLines(r) ?? y.nodeLines(j.node) ?? { start: 1, end: 1 },
      'job-depends-on',
      ref,
      'depends_on',
      jobKey(ctx, need),
      `job ${j.alias} in CircleCI workflow ${j.workflow} requires job ${need}`,
      {
        workflow: j.workflow,
        needs: need,
      },
    );
  }
}
