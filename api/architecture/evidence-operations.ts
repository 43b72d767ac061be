/**
 * One evidence item with what it cites: the file, the line range, the cited lines as the audit
 * read them (from the blob store, by the manifest's SHA-256), and whether they still hash to the
 * content_sha256 the analyzer recorded. The proof behind an edge of the graph, for a reader.
 */
import crypto from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { findAudit } from '../../db/audits';
import { evidenceOfAudit, sourceFileAt } from '../../db/cited-lines';
import { BlobStore } from '../../platform/blob-store';
import { AuditParams } from '../audits/schemas';
import { problems } from '../errors';
import { defineOperation, ok, operationGroup, route } from '../registry/operation';
import { LiteralUnion, Nullable, Strict, Uuid } from '../schema-kit';
import { presentEvidence } from './operations';
import { ArchitectureEvidenceResponse } from './schemas';

/** At most this many cited lines are returned (a range over a whole large file is cut). */
export const MAX_CITED_LINES = 400;

const CitedLine = Strict('CitedLine', {
  number: Type.Integer({ minimum: 1, description: '1-based line number.' }),
  text: Type.String({ description: 'The line as the audit read it (untrusted text).' }),
});

export const EvidenceCitationResponse = Strict(
  'EvidenceCitationResponse',
  {
    evidence: ArchitectureEvidenceResponse,
    path: Nullable(Type.String({ description: 'The cited file; null when no location.' })),
    start_line: Nullable(Type.Integer({ minimum: 1 })),
    end_line: Nullable(Type.Integer({ minimum: 1 })),
    file_sha256: Nullable(
      Type.String({ description: 'SHA-256 of the whole file the audit read.' }),
    ),
    lines: Type.Array(CitedLine, {
      description: `The cited lines, at most ${MAX_CITED_LINES}.`,
    }),
    lines_truncated: Type.Boolean({
      description: `The range has more than ${MAX_CITED_LINES} lines.`,
    }),
    verification: LiteralUnion(['verified', 'mismatch', 'unavailable'] as const, {
      description:
        "`verified`: the stored file still hashes to file_sha256 and the cited lines to content_sha256; `mismatch`: either does not (the stored content changed); `unavailable`: the file's content was not kept (too large, binary, retention) or the evidence has no location.",
    }),
  },
  { description: 'An evidence item with the lines it cites and whether they verify.' },
);

const EvidenceParams = Type.Object(
  {
    ...AuditParams.properties,
    evidence_id: Uuid({ description: 'The evidence item.' }),
  },
  { additionalProperties: false },
);

function sha256(text: string | Buffer): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

const ARCHITECTURE = operationGroup('Architecture');

export const getAuditEvidence = defineOperation({
  operationId: 'getAuditEvidence',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/evidence/{evidence_id}'),
  summary: 'One evidence item of an audit with its cited lines and whether they verify',
  description: `The evidence item (as in getAuditArchitecture), the file and line range it cites, the cited lines (at most ${MAX_CITED_LINES}) read from the content the audit stored, and the verification: the SHA-256 of the cited lines joined with a newline, compared with content_sha256. 404 when the audit has no snapshot or the snapshot no such evidence.`,
  ...ARCHITECTURE.scope('audits:read'),
  params: EvidenceParams,
  success: ok('The evidence and what it cites.', EvidenceCitationResponse),
  handler: async ({ db, params, services }) => {
    const audit = await findAudit(db, params.workspace_id, params.audit_id);
    if (!audit) throw problems.notFound(`Audit ${params.audit_id}`);
    const e = await evidenceOfAudit(db, audit.workspace_id, audit.id, params.evidence_id);
    if (!e) throw problems.notFound(`Evidence ${params.evidence_id} of audit ${audit.id}`);
    const location = e.location as { path?: unknown; start_line?: unknown; end_line?: unknown };
    const path = typeof location?.path === 'string' ? location.path : null;
    const start = Number.isInteger(location?.start_line) ? (location.start_line as number) : null;
    const end = Number.isInteger(location?.end_line) ? (location.end_line as number) : null;
    const evidence = presentEvidence(e);
    const unavailable = {
      evidence,
      path,
      start_line: start,
      end_line: end,
      file_sha256: null,
      lines: [],
      lines_truncated: false,
      verification: 'unavailable' as const,
    };
    if (path === null || start === null || end === null || end < start) return unavailable;
    const file = await sourceFileAt(db, audit.id, path);
    if (!file?.sha256 || !file.stored) return unavailable;
    const content = await new BlobStore(services.config.blobDir).get(file.sha256).catch(() => null);
    if (!content) return unavailable;
    const cited = content
      .toString('utf8')
      .split('\n')
      .slice(start - 1, end);
    // Verified only when the stored file is still the one the audit read (its bytes hash to the
    // manifest's SHA-256) and the cited lines hash to what the analyzer recorded.
    const intact = sha256(content) === file.sha256;
    return {
      ...unavailable,
      file_sha256: file.sha256,
      lines: cited.slice(0, MAX_CITED_LINES).map((text, i) => ({ number: start + i, text })),
      lines_truncated: cited.length > MAX_CITED_LINES,
      verification:
        intact && sha256(cited.join('\n')) === e.content_sha256
          ? ('verified' as const)
          : ('mismatch' as const),
    };
  },
});
