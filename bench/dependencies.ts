/**
 * `npm run bench:dependencies`: where getArchitectureDependencies should compute its paths.
 *
 * A snapshot keeps its relationships as one JSONB array (the snapshot is immutable and read
 * whole). Two ways to answer "every maximal simple path from X, up to depth d":
 * - memory: read the snapshot row, walk the graph in JavaScript (analysis/dependencies.ts; the
 *   walk stops at MAX_DEPENDENCY_PATHS paths).
 * - postgres: a recursive CTE over jsonb_array_elements(relationships) that grows simple paths
 *   (an entity never repeats) up to d, keeps the maximal ones, and returns only those rows.
 * Both run against the same rows in a real PostgreSQL (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres; a scratch table is created and dropped) on
 * generated graphs (layered service meshes with cross-links and a cycle), and must return the
 * same number of paths where the memory walk is under its cap. Prints p50 per case and the ratio.
 */
import { performance } from 'node:perf_hooks';
import { createDb } from '../db/connection';
import { dependencyPaths, MAX_DEPENDENCY_PATHS } from '../analysis/dependencies';
import { intEnv } from './env';

interface Rel {
  canonical_key: string;
  source_key: string;
  target_key: string;
  confidence: string;
  evidence_ids: string[];
}

/** A layered graph: `width` entities per layer, each calling `fanout` entities of the next. */
function graph(layers: number, width: number, fanout: number) {
  const entities: Array<{ canonical_key: string }> = [];
  const relationships: Rel[] = [];
  const key = (l: number, i: number) => `service:l${l}-n${i}`;
  for (let l = 0; l < layers; l++)
    for (let i = 0; i < width; i++) entities.push({ canonical_key: key(l, i) });
  let ev = 0;
  const link = (s: string, t: string) =>
    relationships.push({
      canonical_key: `calls:${s}->${t}`,
      source_key: s,
      target_key: t,
      confidence: '0.85',
      evidence_ids: [`e${ev++}`],
    });
  for (let l = 0; l + 1 < layers; l++)
    for (let i = 0; i < width; i++)
      for (let f = 0; f < fanout; f++) link(key(l, i), key(l + 1, (i * 7 + f * 13) % width));
  // A cycle back to the root layer.
  link(key(layers - 1, 0), key(0, 0));
  return { entities, relationships };
}

const CTE = `
WITH RECURSIVE rel AS (
  SELECT r->>'canonical_key' AS k, r->>'source_key' AS s, r->>'target_key' AS t
  FROM bench_dependency_snapshots, jsonb_array_elements(relationships) r
  WHERE id = :id AND r->>'source_key' <> r->>'target_key'
), walk AS (
  SELECT ARRAY[:root::text, rel.t] AS ents, ARRAY[rel.k] AS rels, rel.t AS at, 1 AS depth
  FROM rel WHERE rel.s = :root
  UNION ALL
  SELECT w.ents || rel.t, w.rels || rel.k, rel.t, w.depth + 1
  FROM walk w JOIN rel ON rel.s = w.at
  WHERE w.depth < :depth AND NOT rel.t = ANY(w.ents)
)
SELECT ents, rels FROM walk w
WHERE w.depth = :depth
   OR NOT EXISTS (SELECT 1 FROM rel WHERE rel.s = w.at AND NOT rel.t = ANY(w.ents))
`;

function p50(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const runs = intEnv('BENCH_RUNS', 15);
  const db = createDb(url, { max: 2 });
  try {
    await db.raw(
      'CREATE TABLE IF NOT EXISTS bench_dependency_snapshots (id int PRIMARY KEY, entities jsonb, relationships jsonb)',
    );
    await db('bench_dependency_snapshots').del();
    const cases = [
      { name: 'small (30 entities)', layers: 3, width: 10, fanout: 2, depth: 3 },
      { name: 'medium (200 entities)', layers: 5, width: 40, fanout: 3, depth: 4 },
      { name: 'large (1,000 entities)', layers: 10, width: 100, fanout: 3, depth: 5 },
      { name: 'large, deep (1,000 entities)', layers: 10, width: 100, fanout: 3, depth: 8 },
    ];
    console.log(
      `${runs} runs per case; p50 milliseconds (memory walk caps at ${MAX_DEPENDENCY_PATHS} paths)`,
    );
    console.log(
      'case                              paths(mem) paths(pg)   memory   postgres  pg/mem',
    );
    for (const [id, c] of cases.entries()) {
      const g = graph(c.layers, c.width, c.fanout);
      await db('bench_dependency_snapshots').insert({
        id,
        entities: JSON.stringify(g.entities),
        relationships: JSON.stringify(g.relationships),
      });
      const root = 'service:l0-n0';
      const mem: number[] = [];
      const pg: number[] = [];
      let memPaths = 0;
      let pgPaths = 0;
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        const row = await db('bench_dependency_snapshots').where({ id }).first();
        memPaths = dependencyPaths(
          { entities: row.entities, relationships: row.relationships },
          root,
          'downstream',
          c.depth,
        ).length;
        mem.push(performance.now() - t);
        t = performance.now();
        const res = await db.raw(CTE, { id, root, depth: c.depth });
        pgPaths = res.rows.length;
        pg.push(performance.now() - t);
      }
      if (memPaths < MAX_DEPENDENCY_PATHS && memPaths !== pgPaths)
        throw new Error(`${c.name}: memory found ${memPaths} paths, postgres ${pgPaths}`);
      const m = p50(mem);
      const p = p50(pg);
      console.log(
        `${c.name.padEnd(33)} ${String(memPaths).padStart(10)} ${String(pgPaths).padStart(9)} ${m.toFixed(1).padStart(8)} ${p.toFixed(1).padStart(10)} ${(p / m).toFixed(1).padStart(7)}`,
      );
    }
  } finally {
    await db.raw('DROP TABLE IF EXISTS bench_dependency_snapshots').catch(() => {});
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
