/**
 * GitHub Actions workflows (`.github/workflows/*.yml`): the workflow and its triggers and
 * permissions, jobs and their needs, environments and service containers, every `uses:` with
 * its pin state, and what jobs build, push and deploy.
 */
import type { YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import type { Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { stem } from '../shared/paths';
import { type Entry, type YamlFile } from '../shared/yaml';
import { Sink, githubSecretRefs, pathKey, scriptOps, type JobRef, type LocatedOp } from './common';
import { isCompositeAction, readCompositeAction } from './github-composite';
import { actionOps, parseUses, pinPhrase } from './github-steps';

const PROVIDER = 'github-actions';
/** Triggers that run with write tokens and secrets on code or data an outsider controls. */
const RISKY_TRIGGERS = new Set(['pull_request_target', 'workflow_run']);

export interface Trigger {
  event: string;
  branches?: string[];
  branches_ignore?: string[];
  tags?: string[];
  paths?: string[];
  types?: string[];
  crons?: string[];
  workflows?: string[];
  inputs?: string[];
}

function readTriggers(y: YamlFile, node: unknown): Trigger[] {
  const single = y.scalarString(node);
  if (single !== undefined) return [{ event: single }];
  const seq = y.asSeq(node);
  if (seq) return y.stringList(seq).map((event) => ({ event }));
  return y.entries(y.asMap(node)).map((e) => {
    const m = y.asMap(e.value);
    const list = (k: string): string[] | undefined => {
      const v = y.get(m, k);
      return v ? y.stringList(v) : undefined;
    };
    const t: Trigger = { event: e.key };
    const fields: [keyof Trigger, string][] = [
      ['branches', 'branches'],
      ['branches_ignore', 'branches-ignore'],
      ['tags', 'tags'],
      ['paths', 'paths'],
      ['types', 'types'],
      ['workflows', 'workflows'],
    ];
    for (const [field, key] of fields) {
      const v = list(key);
      if (v) (t as unknown as Record<string, string[]>)[field] = v;
    }
    if (e.key === 'schedule') {
      t.crons = (y.asSeq(e.value)?.items ?? []).flatMap((i) =>
        y.stringList(y.get(y.asMap(i), 'cron')),
      );
    }
    const inputs = y.asMap(y.get(m, 'inputs'));
    if (inputs) t.inputs = y.entries(inputs).map((i) => i.key);
    return t;
  });
}

/** `read-all`/`write-all` as written, a map as an object, `{}` for none. */
function readPermissions(y: YamlFile, node: unknown): unknown {
  const s = y.scalarString(node);
  if (s !== undefined) return s;
  const js = y.toJs(node);
  return js && typeof js === 'object' ? js : {};
}

function describePermissions(p: unknown): string {
  if (typeof p === 'string') return p;
  const pairs = Object.entries(p as Record<string, unknown>).map(([k, v]) => `${k}: ${String(v)}`);
  return pairs.length ? pairs.join(', ') : 'none';
}

/** Analyzes one GitHub Actions workflow file. */
export function analyzeGithubWorkflow(file: SourceFile): AnalyzerOutput {
  const { sink, yaml } = Sink.forMapping(file, PROVIDER);
  if (!yaml) return sink.output();
  const { y, root } = yaml;
  // A composite action (`.github/actions/x/action.yml`): its steps run inside the jobs that use it.
  if (isCompositeAction(file.path)) return readCompositeAction(file, sink, y, root, readStep);
  const wf = stem(file.path);
  const pipeline = { key: pathKey('pipeline', PROVIDER, wf), label: `workflow ${wf}` };
  const on = y.entry(root, 'on') ?? y.entry(root, 'true');
  const triggers = readTriggers(y, on?.value ?? null);
  const events = triggers.map((t) => t.event);
  const risky = events.filter((e) => RISKY_TRIGGERS.has(e));
  const permEntry = y.entry(root, 'permissions');
  const permissions = permEntry ? readPermissions(y, permEntry.value) : 'default';
  const rootLines = y.nodeLines(root) ?? { start: 1, end: 1 };
  const permText = permEntry
    ? `top-level permissions ${describePermissions(permissions)}`
    : 'no top-level permissions (the repository default applies, which may be write-all)';
  sink.add(
    rootLines,
    'pipeline-declared',
    pipeline.key,
    null,
    null,
    `GitHub Actions workflow ${wf} runs on ${events.join(', ') || 'no trigger'} with ${permText}`,
    {
      name: y.getString(root, 'name') ?? wf,
      triggers,
      events,
      risky_trigger: risky.length > 0,
      risky_triggers: risky,
      permissions,
      permissions_declared: permEntry !== undefined,
      concurrency: y.toJs(y.get(root, 'concurrency')),
      secrets: githubSecretRefs(file.text),
    },
  );
  const vars = sink.readEnv(y, y.get(root, 'env'), pipeline, 'workflow env');
  const workflow: WorkflowContext = {
    y,
    sink,
    wf,
    pipelineKey: pipeline.key,
    permissions,
    permissionsDeclared: !!permEntry,
    vars,
  };
  for (const e of y.entries(y.asMap(y.get(root, 'jobs')))) readJob(workflow, e);
  return sink.output();
}

export interface WorkflowContext {
  y: YamlFile;
  sink: Sink;
  wf: string;
  pipelineKey: string;
  permissions: unknown;
  permissionsDeclared: boolean;
  vars: Record<string, string>;
}

function jobKey(w: WorkflowContext, id: string): string {
  return pathKey('job', PROVIDER, w.wf, id);
}

function readJob(w: WorkflowContext, e: Entry): void {
  const { y, sink } = w;
  const job = y.asMap(e.value);
  if (!job) return;
  const id = e.key;
  const envNode = y.get(job, 'environment');
  const envMap = y.asMap(envNode);
  const environment = y.scalarString(envNode) ?? y.getString(envMap, 'name') ?? null;
  const envUrl = y.getString(envMap, 'url') ?? null;
  const ref: JobRef = { key: jobKey(w, id), label: `job ${id} in workflow ${w.wf}`, environment };
  const permEntry = y.entry(job, 'permissions');
  const permissions = permEntry ? readPermissions(y, permEntry.value) : w.permissions;
  const permissionsSource = permEntry ? 'job' : w.permissionsDeclared ? 'workflow' : 'default';
  const needsEntry = y.entry(job, 'needs');
  const needs = y.stringList(needsEntry?.value);
  const runsOn = y.toJs(y.get(job, 'runs-on'));
  const services = y.entries(y.asMap(y.get(job, 'services')));
  const strategy = y.asMap(y.get(job, 'strategy'));
  const uses = y.getString(job, 'uses');
  const runsOnText =
    typeof runsOn === 'string'
      ? runsOn
      : Array.isArray(runsOn)
        ? runsOn.join(', ')
        : uses
          ? `reusable workflow ${uses}`
          : 'an unspecified runner';
  sink.jobDeclared(
    y.entryLines(e),
    ref,
    w.pipelineKey,
    `${ref.label} runs on ${runsOnText}${environment ? ` in environment ${environment}` : ''} with permissions ${describePermissions(permissions)} (${permissionsSource === 'job' ? 'job-level' : permissionsSource === 'workflow' ? 'inherited from the workflow' : 'repository default'})`,
    {
      name: y.getString(job, 'name') ?? id,
      runs_on: runsOn,
      environment: environment ? { name: environment, url: envUrl } : null,
      permissions,
      permissions_source: permissionsSource,
      needs,
      if: y.getString(job, 'if') ?? null,
      services: services.map((s) => ({ name: s.key, image: serviceImage(y, s.value) ?? null })),
      container: serviceImage(y, y.get(job, 'container')) ?? null,
      matrix: y.get(strategy, 'matrix') !== null,
      uses: uses ?? null,
      secrets: githubSecretRefs(y.pairSource(e.pair)),
      secrets_inherit: y.getString(job, 'secrets') === 'inherit',
    },
  );
  readNeeds(w, ref, needsEntry);
  for (const s of services) containerImage(w, ref, s, 'service');
  const container = y.entry(job, 'container');
  if (container) containerImage(w, ref, container, 'container');
  const vars = { ...w.vars, ...sink.readEnv(y, y.get(job, 'env'), ref, 'job env') };
  if (uses)
    useEvidence(w, ref, { uses, lines: y.entryLines(y.entry(job, 'uses') ?? e), step: null });
  let deployed = false;
  const steps = y.asSeq(y.get(job, 'steps'))?.items ?? [];
  steps.forEach((item, i) => {
    deployed = readStep(w, ref, y.asMap(item), i, vars) || deployed;
  });
  const envEntry = y.entry(job, 'environment');
  if (!deployed && envEntry)
    sink.emitEnvironmentDeploy(ref, y.entryLines(envEntry), { url: envUrl });
}

function serviceImage(y: YamlFile, node: unknown): string | undefined {
  return y.scalarString(node) ?? y.getString(y.asMap(node), 'image');
}

function readNeeds(w: WorkflowContext, ref: JobRef, needsEntry: Entry | undefined): void {
  if (!needsEntry) return;
  const { y } = w;
  const items = y.asSeq(needsEntry.value)?.items ?? [needsEntry.value];
  for (const item of items) {
    const need = y.scalarString(item);
    if (!need) continue;
    const lines =
      (items.length > 1 || y.asSeq(needsEntry.value) ? y.nodeLines(item) : null) ??
      y.entryLines(needsEntry);
    w.sink.add(
      lines,
      'job-depends-on',
      ref.key,
      'depends_on',
      jobKey(w, need),
      `${ref.label} waits for job ${need}`,
      { needs: need },
    );
  }
}

function containerImage(
  w: WorkflowContext,
  ref: JobRef,
  e: Entry,
  role: 'service' | 'container',
): void {
  const { y } = w;
  const raw = serviceImage(y, e.value);
  const img = raw ? parseImageRef(raw) : null;
  if (!img) return;
  const what = role === 'service' ? `service container ${e.key}` : 'its steps in container';
  w.sink.add(
    y.entryLines(e),
    'image-reference',
    ref.key,
    'uses_image',
    imageKey(img),
    `${ref.label} runs ${what} (${img.raw})`,
    {
      role,
      ...(role === 'service' ? { service: e.key } : {}),
      ...imageAttributes(img),
    },
  );
  const env = y.get(y.asMap(e.value), 'env');
  w.sink.readEnv(y, env, ref, `${role} env`);
}

function useEvidence(
  w: WorkflowContext,
  ref: JobRef,
  use: { uses: string; lines: Span; step: string | null },
): ReturnType<typeof parseUses> {
  const u = parseUses(use.uses);
  const who = use.step ? `step ${use.step} of ${ref.label}` : ref.label;
  const verb = u.reusable_workflow ? 'calls reusable workflow' : 'uses';
  w.sink.add(
    use.lines,
    'action-use',
    ref.key,
    'uses',
    u.object,
    `${who} ${verb} ${u.raw} (${pinPhrase(u)})`,
    {
      uses: u.raw,
      ref: u.ref,
      pin: u.pin,
      pinned: u.pinned,
      first_party: u.first_party,
      reusable_workflow: u.reusable_workflow,
      step: use.step,
    },
  );
  return u;
}

/**
 * An action's `image:` input written as an image (`tonistiigi/binfmt:latest` for
 * docker/setup-qemu-action): the image the action pulls and runs. Expressions are left out.
 */
function actionInputImage(
  w: WorkflowContext,
  ref: JobRef,
  withMap: YAMLMap | null,
  step: string,
): void {
  const e = w.y.entry(withMap, 'image');
  const raw = e ? w.y.scalarString(e.value) : null;
  if (!e || !raw || raw.includes('${{')) return;
  const img = parseImageRef(raw.trim());
  if (!img) return;
  w.sink.add(
    w.y.entryLines(e),
    'image-reference',
    ref.key,
    'uses_image',
    imageKey(img),
    `step ${step} of ${ref.label} pulls ${img.raw}`,
    { role: 'action-input', step, ...imageAttributes(img) },
  );
}

/** Reads one step; returns whether it deploys. */
export function readStep(
  w: WorkflowContext,
  ref: JobRef,
  step: YAMLMap | null,
  i: number,
  jobVars: Record<string, string>,
): boolean {
  const { y, sink } = w;
  if (!step) return false;
  const label = y.getString(step, 'name') ?? y.getString(step, 'id') ?? String(i + 1);
  const stepLines = y.nodeLines(step) ?? { start: 1, end: 1 };
  const vars = { ...jobVars, ...sink.readEnv(y, y.get(step, 'env'), ref, 'step env') };
  const withMap = y.asMap(y.get(step, 'with'));
  sink.readEnv(y, withMap, ref, 'step input');
  let deployed = false;
  const uses = y.getString(step, 'uses');
  if (uses) {
    const u = useEvidence(w, ref, { uses, lines: stepLines, step: label });
    actionInputImage(w, ref, withMap, label);
    for (const op of actionOps(y, u, withMap, vars)) {
      const located: LocatedOp = { ...op, line: 0, line_count: 1, lines: stepLines };
      const job =
        op.environment && !ref.environment ? { ...ref, environment: op.environment } : ref;
      deployed = sink.emitOp(job, located, { step: label }) || deployed;
    }
  }
  const run = y.get(step, 'run');
  for (const op of scriptOps(y, run, vars))
    deployed = sink.emitOp(ref, op, { step: label }) || deployed;
  return deployed;
}
