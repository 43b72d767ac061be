/**
 * What analyzers emit: one observed fact at one place in the source.
 * Analyzers are pure functions over the audit's files; the reconcile stage turns their evidence
 * into entities and relationships with canonical keys.
 */
import crypto from 'node:crypto';
import { compareStrings } from './shared/text';

export type SourceType = 'code' | 'cloud' | 'cicd';

export interface EvidenceLocation {
  path: string;
  /** 1-based, inclusive. */
  start_line: number;
  end_line: number;
}

export interface Evidence {
  source_type: SourceType;
  /** Which format or tool said it: `docker-compose`, `kubernetes`, `terraform`, `github-actions`, `npm`, `typescript-imports`... */
  provider: string;
  /** What kind of fact: `service-declared`, `image-reference`, `depends-on`, `env-reference`, `port-exposed`, ... */
  evidence_kind: string;
  /** Canonical key of the subject, `<kind>:<normalized-name>` (`service:cartservice`). */
  subject_key: string;
  relationship_kind: string | null;
  object_key: string | null;
  location: EvidenceLocation;
  summary: string;
  /** SHA-256 (hex) of the cited lines, joined with '\n'. */
  content_sha256: string;
  /** Extra structured facts (image tag, port, replicas, permissions...). */
  attributes: Record<string, unknown>;
}

/** A file as analyzers see it. */
export interface SourceFile {
  path: string;
  text: string;
}

/** Coverage gaps an analyzer reports instead of guessing (e.g. a Helm template it cannot render). */
export interface AnalyzerGap {
  path: string;
  reason: string;
  message: string;
}

export interface AnalyzerOutput {
  evidence: Evidence[];
  gaps: AnalyzerGap[];
}

/** Lowercase, runs of anything but [a-z0-9.-] become '-', trimmed of '-'. */
export function normalizeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function entityKey(kind: string, name: string): string {
  return `${kind}:${normalizeName(name)}`;
}

/** The kind of a canonical key: `service` of `service:cart`. */
export function keyKind(key: string): string {
  return key.slice(0, key.indexOf(':'));
}

/** The name of a canonical key: `cart` of `service:cart`. */
export function keyName(key: string): string {
  return key.slice(key.indexOf(':') + 1);
}

function shaOfLines(lines: string[], start: number, end: number): string {
  return crypto
    .createHash('sha256')
    .update(lines.slice(start - 1, end).join('\n'))
    .digest('hex');
}

/**
 * A file's lines, split once per file: citing k places of a file costs O(k + file size), not
 * O(k x file size) (a 10,000-service compose file is cited ~60,000 times; issue 24).
 */
const fileLines = new WeakMap<SourceFile, { text: string; lines: string[] }>();
function linesOf(file: SourceFile): string[] {
  const cached = fileLines.get(file);
  if (cached && cached.text === file.text) return cached.lines;
  const lines = file.text.split('\n');
  fileLines.set(file, { text: file.text, lines });
  return lines;
}

/** Builds one evidence record citing lines start..end of `file`. */
export function cite(
  file: SourceFile,
  start: number,
  end: number,
  fields: Omit<Evidence, 'location' | 'content_sha256'>,
): Evidence {
  const lines = linesOf(file);
  const total = lines.length;
  const s = Math.max(1, Math.min(start, total));
  const e = Math.max(s, Math.min(end, total));
  return {
    ...fields,
    location: { path: file.path, start_line: s, end_line: e },
    content_sha256: shaOfLines(lines, s, e),
  };
}

/** The order analyzers emit evidence in: by citation, then kind, subject, object and content. */
export function compareEvidence(a: Evidence, b: Evidence): number {
  return (
    compareStrings(a.location.path, b.location.path) ||
    a.location.start_line - b.location.start_line ||
    a.location.end_line - b.location.end_line ||
    compareStrings(a.evidence_kind, b.evidence_kind) ||
    compareStrings(a.subject_key, b.subject_key) ||
    compareStrings(a.object_key ?? '', b.object_key ?? '') ||
    compareStrings(a.summary, b.summary) ||
    compareStrings(JSON.stringify(a.attributes), JSON.stringify(b.attributes))
  );
}

/** The order analyzers report coverage gaps in. */
export function compareGaps(a: AnalyzerGap, b: AnalyzerGap): number {
  return (
    compareStrings(a.path, b.path) ||
    compareStrings(a.reason, b.reason) ||
    compareStrings(a.message, b.message)
  );
}
