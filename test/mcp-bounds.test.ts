/**
 * MCP tool results stay under the documented cap: a page keeps what fits with a real cursor, a
 * graph becomes keys with counts, other objects cut their longest lists and say so.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { boundText, boundToolBody, TOOL_RESULT_MAX_CHARS } from '../api/mcp/bounds';
import { decodeCursor } from '../domain/pagination';

const size = (v: unknown) => JSON.stringify(v).length;

test('a small result is untouched', (t) => {
  const body = { items: [{ id: 'a' }], has_more: false, next_cursor: null };
  t.is(boundToolBody(body), body);
});

test('a long page keeps the items that fit, with has_more and a cursor after the last kept', (t) => {
  const items = Array.from({ length: 400 }, (_, i) => ({
    id: crypto.randomUUID(),
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    title: 'x'.repeat(500),
  }));
  const bounded = boundToolBody({ items, has_more: false, next_cursor: null }) as any;
  t.true(size(bounded) <= TOOL_RESULT_MAX_CHARS);
  t.true(bounded.items.length > 50 && bounded.items.length < 400, String(bounded.items.length));
  t.true(bounded.has_more);
  const last = bounded.items[bounded.items.length - 1];
  t.deepEqual(decodeCursor(bounded.next_cursor), { createdAt: last.created_at, id: last.id });
  t.regex(bounded.truncated.reason, /of 400 items/);
});

test('a large graph becomes every entity key with counts, and as many relationships as fit', (t) => {
  const entities = Array.from({ length: 500 }, (_, i) => ({
    canonical_key: `service:s${i}`,
    kind: i % 5 === 0 ? 'datastore' : 'service',
    confidence: '0.80',
    attributes: { note: 'y'.repeat(300) },
    evidence_ids: [crypto.randomUUID(), crypto.randomUUID()],
  }));
  const relationships = Array.from({ length: 2000 }, (_, i) => ({
    canonical_key: `connects_to:service:s${i % 500}->service:s${(i * 7) % 500}`,
    source_key: `service:s${i % 500}`,
    target_key: `service:s${(i * 7) % 500}`,
    kind: 'connects_to',
    confidence: '0.70',
    evidence_ids: [crypto.randomUUID()],
  }));
  const evidence = Array.from({ length: 3000 }, () => ({
    id: crypto.randomUUID(),
    excerpt: 'z'.repeat(200),
  }));
  const bounded = boundToolBody({
    audit_id: 'a1',
    snapshot_id: 's1',
    entities,
    relationships,
    evidence,
  }) as any;
  t.true(size(bounded) <= TOOL_RESULT_MAX_CHARS, String(size(bounded)));
  t.true(bounded.summary);
  t.is(bounded.audit_id, 'a1');
  t.deepEqual(bounded.counts.entities_by_kind, { datastore: 100, service: 400 });
  t.is(bounded.counts.relationships, 2000);
  t.is(bounded.entities.length, 500, 'every entity key is there');
  t.is(bounded.entities[0], 'service:s0 (0.80)');
  t.true(bounded.relationships.length > 100);
  t.is(bounded.relationships[0], 'service:s0 -connects_to-> service:s0 (0.70)');
  t.regex(bounded.truncated.hint, /explain_entity/);
});

test('other objects cut their longest lists, one level down too, and name each cut', (t) => {
  const paths = Array.from({ length: 3000 }, (_, i) => ({
    keys: [`a${i}`, `b${i}`],
    note: 'n'.repeat(40),
  }));
  const body = {
    entity: { canonical_key: 'service:a' },
    dependencies: { upstream: paths, downstream: [] },
  };
  const bounded = boundToolBody(body) as any;
  t.true(size(bounded) <= TOOL_RESULT_MAX_CHARS);
  t.deepEqual(bounded.entity, { canonical_key: 'service:a' });
  t.true(bounded.dependencies.upstream.length > 100);
  t.regex(bounded.truncated.reason, /dependencies\.upstream: \d+ of 3000/);
});

test('text past the cap is cut with a marker saying how much', (t) => {
  const text = 'a'.repeat(TOOL_RESULT_MAX_CHARS + 5000);
  const cut = boundText(text);
  t.is(cut.length, TOOL_RESULT_MAX_CHARS);
  t.regex(cut, /more characters left out/);
  t.is(boundText('short'), 'short');
});
