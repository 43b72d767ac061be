/** An audit's architecture snapshot drawn as a diagram: Mermaid source or a standalone SVG. */
import { Type } from '@sinclair/typebox';
import { LRUCache } from 'lru-cache';
import { diagramGraphOf, mermaid, svg } from '../../analysis/diagram';
import { snapshotOfAudit, snapshotRefOfAudit } from '../../db/architecture';
import { AuditParams } from '../audits/schemas';
import { defineOperation, operationGroup, route } from '../registry/operation';
import { found } from '../registry/parts';
import { loadAudit } from '../registry/loads';

/** Koa adds `; charset=utf-8` to a text/* type. */
export const MERMAID_TYPE = 'text/vnd.mermaid';
export const SVG_TYPE = 'image/svg+xml';

/**
 * Drawn diagrams by snapshot and format. A snapshot never changes, so neither does its drawing,
 * and laying out the SVG costs the API's event loop ~70 ms for 50 entities and ~640 ms for 500
 * (dagre): a repeat view is answered from here. Bounded by size (characters), least recently
 * used first out; per API process.
 */
const drawn = new LRUCache<string, string>({
  maxSize: 32 * 1024 * 1024,
  sizeCalculation: (text) => Math.max(1, text.length),
});

const ARCHITECTURE = operationGroup('Architecture');

export const getAuditArchitectureDiagram = defineOperation({
  operationId: 'getAuditArchitectureDiagram',
  ...route.get('/v1/workspaces/{workspace_id}/audits/{audit_id}/architecture/diagram'),
  summary: "An audit's architecture snapshot as a diagram",
  description:
    'The entities and relationships of the snapshot, drawn left to right and grouped by kind: `format=mermaid` answers Mermaid flowchart source (`text/vnd.mermaid`), `format=svg` a standalone SVG image (`image/svg+xml`). The same snapshot always gives the same text. 404 until the audit has passed its reconcile stage.',
  ...ARCHITECTURE.scope('audits:read'),
  params: AuditParams,
  query: Type.Object(
    {
      format: Type.Optional(
        Type.Union([Type.Literal('mermaid'), Type.Literal('svg')], {
          default: 'mermaid',
          description: 'mermaid: Mermaid flowchart source; svg: an SVG image.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  success: {
    status: 200,
    description:
      'The diagram: Mermaid source (text/vnd.mermaid) or an SVG image (image/svg+xml), by `format`.',
    schema: Type.String(),
    contentType: [MERMAID_TYPE, SVG_TYPE],
  },
  handler: async ({ db, params, query, koa }) => {
    const audit = await loadAudit(db, params.workspace_id, params.audit_id);
    const ref = await found(
      snapshotRefOfAudit(db, audit.id),
      `The architecture snapshot of audit ${audit.id}`,
    );
    const format = query.format === 'svg' ? 'svg' : 'mermaid';
    const key = `${ref.id}:${format}`;
    let text = drawn.get(key);
    if (text === undefined) {
      const snapshot = await found(
        snapshotOfAudit(db, audit.id),
        `The architecture snapshot of audit ${audit.id}`,
      );
      const graph = diagramGraphOf(snapshot);
      text =
        format === 'svg'
          ? svg(graph, {
              title: `Architecture of audit ${audit.id} (snapshot version ${snapshot.version})`,
            })
          : mermaid(graph);
      drawn.set(key, text);
    }
    if (format === 'svg') {
      koa.type = SVG_TYPE;
      // Every text in it is escaped; still, an image from the API origin runs nothing.
      koa.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
      koa.set('X-Content-Type-Options', 'nosniff');
    } else koa.type = MERMAID_TYPE;
    return text;
  },
});
