/**
 * What every CI reader shares: key building, image references, secret detection, the evidence
 * sink, and turning recognised script operations into build/push/deploy/publish evidence.
 */
import { isScalar, type Scalar } from 'yaml';
import {
  cite,
  entityKey,
  normalizeName,
  type AnalyzerGap,
  type AnalyzerOutput,
  type Evidence,
  type SourceFile,
} from '../evidence';
import { scanScript } from './commands';
import type { Op } from './shell';
import {
  asMap,
  deref,
  entries,
  entryLines,
  getString,
  locateScriptLine,
  nodeLines,
  scalarString,
  type Lines,
  type YamlFile,
} from './yaml-nodes';

/** `<kind>:<a>/<b>/...` with every `/`-separated segment normalized; slashes are kept. */
export function pathKey(kind: string, ...parts: string[]): string {
  const segments = parts
    .flatMap((p) => p.split('/'))
    .map((s) => (s === '.' || s === '..' ? s : normalizeName(s)))
    .filter((s) => s.length > 0);
  return `${kind}:${segments.join('/')}`;
}

/** Last path segment without its extension (`.github/workflows/ci.yml` → `ci`). */
export function baseName(path: string): string {
  const last = path.split('/').pop() ?? path;
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(0, dot) : last;
}

/** A name for a CI file from its directory: `root` at the repository root, `services-api` below. */
export function dirName(path: string): string {
  const dir = path
    .split('/')
    .slice(0, -1)
    .filter((s) => s !== '' && s !== '.');
  return dir.length === 0 ? 'root' : normalizeName(dir.join('-'));
}

export interface ImageRef {
  raw: string;
  /** Repository without tag or digest; Docker Hub's `docker.io/` and `library/` dropped. */
  repo: string;
  tag: string | null;
  digest: string | null;
  /** False when the repository still holds an unexpanded `$VAR` or `${{ }}` expression. */
  resolved: boolean;
}

/** Same reading as the cloud analyzers' image parser, so image keys line up across sources. */
export function parseImageRef(raw: string): ImageRef | null {
  let rest = raw.trim().replace(/^docker:\/\//, '');
  if (!rest) return null;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at > 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/') && colon > 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const repo = rest
    .replace(/^(?:(?:index\.)?docker\.io\/)?library\//, '')
    .replace(/^docker\.io\//, '');
  return { raw: raw.trim(), repo, tag, digest, resolved: !isDynamic(repo) && repo.length > 0 };
}

/** Holds a variable or template expression (`$X`, `${{ }}`, CircleCI `<< >>`, Jinja-ish `{{ }}`). */
export function isDynamic(value: string): boolean {
  return /\$|<<|\{\{/.test(value);
}

/** `image:<repo>` through `entityKey`, as the cloud analyzers key images. */
export function imageKey(ref: ImageRef): string | null {
  return ref.resolved ? entityKey('image', ref.repo) : null;
}

export function imageAttributes(ref: ImageRef): Record<string, unknown> {
  return {
    image: ref.raw,
    repo: ref.repo,
    tag: ref.tag,
    digest: ref.digest,
    pinned: ref.digest !== null && /^sha256:[0-9a-f]{64}$/i.test(ref.digest),
    ...(ref.resolved ? {} : { unresolved: true }),
  };
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

const SECRET_NAME = /(TOKEN|PASSWORD|PASSWD|SECRET|KEY|CREDENTIALS?)$/i;
const NOT_SECRET_NAME =
  /(^KEY$|PUBLIC_?KEY|CACHE_?KEY|SORT_?KEY|PARTITION_?KEY|PRIMARY_?KEY|KEY_?ID)$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NOT_SECRET_NAME.test(name);
}

/** A literal value: not empty, not a boolean, not a `${{ }}`, `$VAR` or `$(var)` reference. */
export function isLiteralValue(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.trim();
  if (!v || /^(true|false|yes|no|null|~)$/i.test(v)) return false;
  return !v.includes('${{') && !v.startsWith('$') && !v.startsWith('%');
}

/** Collects evidence and gaps for one file and one provider. */
export class Sink {
  readonly evidence: Evidence[] = [];
  readonly gaps: AnalyzerGap[] = [];

  constructor(
    readonly file: SourceFile,
    readonly provider: string,
  ) {}

  add(
    lines: Lines,
    kind: string,
    subject: string,
    relationship: string | null,
    object: string | null,
    summary: string,
    attributes: Record<string, unknown> = {},
  ): void {
    const attrs = Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined));
    this.evidence.push(
      cite(this.file, lines.start, lines.end, {
        source_type: 'cicd',
        provider: this.provider,
        evidence_kind: kind,
        subject_key: subject,
        relationship_kind: object === null ? null : relationship,
        object_key: object,
        summary,
        attributes: attrs,
      }),
    );
  }

  gap(reason: string, message: string): void {
    this.gaps.push({ path: this.file.path, reason, message });
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
  lines: Lines;
}

function describe(op: Op): string {
  return op.action ? `${op.tool} ${op.action}` : op.tool;
}

/** One evidence record for a recognised operation; returns whether it was a deploy. */
export function emitOp(
  sink: Sink,
  job: JobRef,
  op: LocatedOp,
  extra: Record<string, unknown> = {},
): boolean {
  const base = { tool: op.tool, action: op.action, ...op.detail, ...extra };
  if (op.kind === 'image-build' || op.kind === 'image-push') {
    const ref = op.image ? parseImageRef(op.image) : null;
    if (!ref) return false;
    const verb = op.kind === 'image-build' ? 'builds' : 'pushes';
    sink.add(
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
    sink.add(
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
  const object = target ? entityKey('service', target) : env ? entityKey('environment', env) : null;
  const how = describe(op);
  const summary = target
    ? `${job.label} deploys ${op.target_type ?? 'service'} ${target} with ${how}${env ? ` (environment ${env})` : ''}`
    : env
      ? `${job.label} deploys to environment ${env} with ${how}`
      : `${job.label} deploys with ${how} (target not visible)`;
  sink.add(op.lines, 'deploys', job.key, 'deploys', object, summary, {
    ...base,
    target: op.target ?? null,
    target_type: op.target_type ?? null,
    environment: env,
    ...(op.image ? { image: op.image } : {}),
  });
  return true;
}

/** Deploy evidence for a job whose only sign of deploying is its environment. */
export function emitEnvironmentDeploy(
  sink: Sink,
  job: JobRef,
  lines: Lines,
  extra: Record<string, unknown> = {},
): void {
  const env = job.environment;
  if (!env) return;
  sink.add(
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

/** Operations in a script held by one YAML scalar, each cited at the lines where it is written. */
export function scriptOps(
  y: YamlFile,
  node: unknown,
  vars: Readonly<Record<string, string>>,
): LocatedOp[] {
  const n = deref(y, node);
  const script = scalarString(y, n);
  const within = nodeLines(y, n);
  if (script === undefined || !within) return [];
  const scriptLines = script.split('\n');
  const literal = isScalar(n) && (n as Scalar).type === 'BLOCK_LITERAL';
  let cursor = within.start;
  return scanScript(script, vars).map((op) => {
    let start: number;
    if (literal) start = within.start + 1 + op.line;
    else if (within.start === within.end) start = within.start;
    else start = locateScriptLine(y, within, scriptLines[op.line] ?? '', cursor) ?? within.start;
    cursor = start;
    const end = Math.min(Math.max(start, start + op.line_count - 1), within.end);
    return { ...op, lines: { start, end } };
  });
}

/**
 * Reads an env/variables map: secret-looking names with literal values become `literal-secret`
 * evidence (name only, never the value); other literal values are returned for `$VAR` expansion.
 */
export function readEnv(
  sink: Sink,
  y: YamlFile,
  node: unknown,
  owner: { key: string; label: string },
  scope: string,
): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const e of entries(y, asMap(y, node))) {
    const value = scalarString(y, e.value) ?? getString(y, asMap(y, e.value), 'value');
    if (!isLiteralValue(value)) continue;
    if (isSecretName(e.key)) {
      sink.add(
        entryLines(y, e),
        'literal-secret',
        owner.key,
        null,
        null,
        `${scope} variable ${e.key} of ${owner.label} holds a literal value (possible committed secret)`,
        { variable: e.key, scope },
      );
    } else if (value !== undefined) vars[e.key] = value;
  }
  return vars;
}

export function sortOutput(out: AnalyzerOutput): AnalyzerOutput {
  const evidence = [...out.evidence].sort(
    (a, b) =>
      cmp(a.location.path, b.location.path) ||
      a.location.start_line - b.location.start_line ||
      a.location.end_line - b.location.end_line ||
      cmp(a.evidence_kind, b.evidence_kind) ||
      cmp(a.subject_key, b.subject_key) ||
      cmp(a.object_key ?? '', b.object_key ?? '') ||
      cmp(a.summary, b.summary),
  );
  const gaps = [...out.gaps].sort(
    (a, b) => cmp(a.path, b.path) || cmp(a.reason, b.reason) || cmp(a.message, b.message),
  );
  return { evidence, gaps };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
