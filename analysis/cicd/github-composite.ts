/**
 * GitHub composite actions (`.github/actions/<name>/action.yml`, `runs.using: composite`): their
 * steps run inside every job that uses them, so their action uses and images are read like a
 * workflow's steps. A composite action declares no trigger and no permissions (the calling job's
 * apply), so it yields no pipeline or job of its own.
 */
import type { YAMLMap } from 'yaml';
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { basename, dirname } from '../shared/paths';
import { type YamlFile } from '../shared/yaml';
import { pathKey, type JobRef, type Sink } from './common';
import type { WorkflowContext } from './github-actions';

const PROVIDER = 'github-actions';

/** A composite action's definition file (`.github/actions/<name>/action.yml`, nested too). */
export function isCompositeAction(path: string): boolean {
  return /(^|\/)\.github\/actions\/(?:[^/]+\/)*action\.ya?ml$/.test(path);
}

type StepReader = (
  w: WorkflowContext,
  ref: JobRef,
  step: YAMLMap | null,
  i: number,
  vars: Record<string, string>,
) => boolean;

export function readCompositeAction(
  file: SourceFile,
  sink: Sink,
  y: YamlFile,
  root: YAMLMap,
  readStep: StepReader,
): AnalyzerOutput {
  const runs = y.asMap(y.get(root, 'runs'));
  if (y.getString(runs, 'using') !== 'composite') return sink.output();
  const name = basename(dirname(file.path)) || 'action';
  const ref: JobRef = {
    key: pathKey('job', PROVIDER, 'actions', name),
    label: `composite action ${name}`,
  };
  const w: WorkflowContext = {
    y,
    sink,
    wf: name,
    pipelineKey: pathKey('pipeline', PROVIDER, 'actions', name),
    permissions: null,
    permissionsDeclared: false,
    vars: sink.readEnv(y, y.get(runs, 'env'), ref, 'action env'),
  };
  const steps = y.asSeq(y.get(runs, 'steps'))?.items ?? [];
  steps.forEach((item, i) => readStep(w, ref, y.asMap(item), i, w.vars));
  return sink.output();
}
