/**
 * What every CI reader shares: key building, the evidence sink, literal secrets in variable
 * maps, and turning recognised script operations into build/push/deploy/publish evidence.
 */
import { isScalar, type Scalar, type YAMLMap } from 'yaml';
import {
  entityKey,
  normalizeName,
  type AnalyzerGap,
  type AnalyzerOutput,
  type Evidence,
  type SourceFile,
} from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { isLiteralValue, isSecretName, placeholderReason } from '../shared/secrets';
import { isDynamic } from '../shared/variables';
import { parseYamlMapping, type YamlFile } from '../shared/yaml';
import { scanScript } from './commands';
import type { Op } from './shell';

/** `<kind>:<a>/<b>/...` with every `/`-separated segment normalized; slashes are kept. */
export function pathKey(kind: string, ...parts: string[]): string {
  const segments = parts
    .flatMap((p) => p.split('/'))
    .map((s) => (s === '.' || s === '..' ? s : normalizeName(s)))
    .filter((s) => s.length > 0);
  return `${kind}:${segments.join('/')}`;
}

/**
 * A pipeline's name from where its file is: the directories, then what `fileName` keeps of the
 * file's name, joined with `-`; `root` when nothing is left.
 */
export function pipelineName(path: string, fileName: (name: string) => string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  const base = fileName(parts.pop() ?? '');
  return pathKey('x', [...parts, base].filter(Boolean).join('-')).slice(2) || 'root';
}

/** Names of secrets referenced as `${{ secrets.X }}` (or `secrets['X']`) in GitHub expressions. */
export function githubSecretRefs(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/\$\{\{([\s\S]*?)\}\}/g)) {
    const expr = m[1] ?? '';
    for (const s of expr.matchAll(/\bsecrets\.([A-Za-z_][A-Za-z0-9_-]*)/g)) names.add(s[1] ?? '');
    for (const s of expr.matchAll(/\bsecrets\[\s*['"]([^'"]+)['"]\s*\]/g)) names.add(s[1] ?? '');
  }
  names.delete('');
  return [...names].sort();
}

/** Collects evidence and gaps for one file and one provider. */
export class Sink {
  readonly evidence: Evidence[] = [];
  readonly gaps: AnalyzerGap[] = [];

  constructor(
    readonly file: SourceFile,
    readonly provider: string,
  ) {}

  /**
   * The sink of a pipeline file that must hold one YAML mapping, and that mapping; when the file
   * holds none, the parse gap is recorded and `yaml` is null.
   */
  static forMapping(
    file: SourceFile,
    provider: string,
    opts: { allowHeaderDocument?: boolean } = {},
  ): { sink: Sink; yaml: { y: YamlFile; root: YAMLMap } | null } {
    const sink = new Sink(file, provider);
    const parsed = parseYamlMapping(file, opts);
    if (!parsed.ok) {
      sink.gaps.push(parsed.gap);
      return { sink, yaml: null };
    }
    return { sink, yaml: { y: parsed.y, root: parsed.root } };
  }

  add(
    lines: Span,
    kind: string,
    subject: string,
    relationship: string | null,
    object: string | null,
    summary: string,
    attributes: Record<string, unknown> = {},
  ): void {
    const attrs = Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined));
    this.evidence.push(
      evidence(this.file, lines, {
        source: 'cicd',
        provider: this.provider,
        kind,
        subject,
        relationship,
        object,
        summary,
        attributes: attrs,
      }),
    );
  }

  /** A job of the pipeline: `job-declared` evidence, the job part of the pipeline. */
  jobDeclared(
    lines: Span,
    job: { key: string },
    pipelineKey: string,
    summary: string,
    attributes: Record<string, unknown> = {},
  ): void {
    this.add(lines, 'job-declared', job.key, 'part_of', pipelineKey, summary, attributes);
  }

  gap(reason: string, message: string): void {
    this.gaps.push({ path: this.file.path, reason, message });
  }

  /** One evidence record for a recognised operation; returns whether it was a deploy. */
  emitOp(job: JobRef, op: LocatedOp, extra: Record<string, unknown> = {}): boolean {
    const base = { tool: op.tool, action: op.action, ...op.detail, ...extra };
    if (op.kind === 'image-build' || op.kind === 'image-push') {
      const ref = op.image ? parseImageRef(op.image) : null;
      if (!ref) return false;
      const verb = op.kind === 'image-build' ? 'builds' : 'pushes';
      this.add(
        op.lines,
        op.kind,
        job.key,
        verb,
        imageKey(ref),
        `${job.label} ${verb} image ${ref.repo}`,
        {
          ...base,
          ...imageAttributes(ref),
        },
      );
      return false;
    }
    if (op.kind === 'publish') {
      this.add(
        op.lines,
        'package-publish',
        job.key,
        'publishes',
        `package-registry:${op.tool}`,
        `${job.label} publishes an ${op.tool} package`,
        base,
      );
      return false;
    }
    const env = job.environment ?? null;
    const target = op.target && !isDynamic(op.target) ? op.target : undefined;
    const object = target
      ? entityKey('service', target)
      : env
        ? entityKey('environment', env)
        : null;
    const how = describe(op);
    const summary = target
      ? `${job.label} deploys ${op.target_type ?? 'service'} ${target} with ${how}${env ? ` (environment ${env})` : ''}`
      : env
        ? `${job.label} deploys to environment ${env} with ${how}`
        : `${job.label} deploys with ${how} (target not visible)`;
    this.add(op.lines, 'deploys', job.key, 'deploys', object, summary, {
      ...base,
      target: op.target ?? null,
      target_type: op.target_type ?? null,
      environment: env,
      ...(op.image ? { image: op.image } : {}),
    });
    return true;
  }

  /** Deploy evidence for a job whose only sign of deploying is its environment. */
  emitEnvironmentDeploy(job: JobRef, lines: Span, extra: Record<string, unknown> = {}): void {
    const env = job.environment;
    if (!env) return;
    this.add(
      lines,
      'deploys',
      job.key,
      'deploys',
      entityKey('environment', env),
      `${job.label} deploys to environment ${env}`,
      {
        tool: null,
        environment: env,
        ...(isDynamic(env) ? { dynamic: true } : {}),
        ...extra,
      },
    );
  }

  /**
   * Reads an env/variables map: secret-looking names with literal values become `literal-secret`
   * evidence (name only, never the value); other literal values are returned for `$VAR` expansion.
   */
  readEnv(
    y: YamlFile,
    node: unknown,
    owner: { key: string; label: string },
    scope: string,
  ): Record<string, string> {
    const vars: Record<string, string> = {};
    for (const e of y.entries(y.asMap(node))) {
      const value = y.scalarString(e.value) ?? y.getString(y.asMap(e.value), 'value');
      this.keepVariable(owner, vars, {
        name: e.key,
        value,
        lines: y.entryLines(e),
        scope,
        phrase: `${scope} variable`,
      });
    }
    return vars;
  }

  /**
   * One CI variable: a secret-looking name with a literal value becomes `literal-secret` evidence
   * (its name only, never the value); any other literal value goes into `vars` for `$VAR`
   * expansion; a reference goes nowhere.
   */
  keepVariable(
    owner: { key: string; label: string },
    vars: Record<string, string>,
    v: { name: string; value: string | undefined; lines: Span; scope: string; phrase: string },
  ): void {
    if (v.value === undefined || !isLiteralValue(v.value)) return;
    if (!isSecretName(v.name)) {
      vars[v.name] = v.value;
      return;
    }
    const placeholder = placeholderReason(v.value);
    this.add(
      v.lines,
      'literal-secret',
      owner.key,
      null,
      null,
      placeholder
        ? `${v.phrase} ${v.name} of ${owner.label} holds a placeholder (${placeholder}), not a secret`
        : `${v.phrase} ${v.name} of ${owner.label} holds a literal value (possible committed secret)`,
      { variable: v.name, scope: v.scope, ...(placeholder ? { placeholder } : {}) },
    );
  }

  output(): AnalyzerOutput {
    return { evidence: this.evidence, gaps: this.gaps };
  }
}

/** Who runs an operation: the job's key, a readable label, and its deployment environment. */
export interface JobRef {
  key: string;
  /** `job build in workflow ci`. */
  label: string;
  environment?: string | null;
}

export interface LocatedOp extends Op {
  lines: Span;
}

function describe(op: Op): string {
  return op.action ? `${op.tool} ${op.action}` : op.tool;
}

/** Operations in a script held by one YAML scalar, each cited at the lines where it is written. */
export function scriptOps(
  y: YamlFile,
  node: unknown,
  vars: Readonly<Record<string, string>>,
): LocatedOp[] {
  const n = y.deref(node);
  const script = y.scalarString(n);
  const within = y.nodeLines(n);
  if (script === undefined || !within) return [];
  const scriptLines = script.split('\n');
  const literal = isScalar(n) && (n as Scalar).type === 'BLOCK_LITERAL';
  let cursor = within.start;
  return scanScript(script, vars).map((op) => {
    let start: number;
    if (literal) start = within.start + 1 + op.line;
    else if (within.start === within.end) start = within.start;
    else start = y.locateScriptLine(within, scriptLines[op.line] ?? '', cursor) ?? within.start;
    cursor = start;
    const end = Math.min(Math.max(start, start + op.line_count - 1), within.end);
    return { ...op, lines: { start, end } };
  });
}
