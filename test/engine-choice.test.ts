/**
 * An engine-choosing setting (docs/decisions.md, "An engine choice picks the store; the other
 * engine's address variables are inert"): a typed settings default `DB_ENGINE: str = "sqlite"`
 * (with a trailing comment) makes the embedded SQLite the unit's store beside a PostgreSQL
 * driver, named after the unit as deployed; `POSTGRES_SERVER: pgmain` beside `DB_ENGINE: sqlite`
 * in a compose service, naming no container of that file, is no entity and no edge. Small
 * system written for this test.
 */
import test from 'ava';
import type { Graph } from '../analysis/reconcile';
import { analyzeFiles } from './helpers/pipeline';

const run = (m: Record<string, string>) =>
  analyzeFiles(Object.entries(m).map(([path, text]) => ({ path, text })));
const connections = (g: Graph) =>
  g.relationships
    .filter((r) => r.kind === 'connects_to')
    .map((r) => `${r.source_key} -> ${r.target_key}`);
const keys = (g: Graph) => g.entities.map((e) => e.canonical_key);
const known = (g: Graph, key: string) =>
  g.entities.find(
    (e) => e.canonical_key === key || ((e.attributes.aliases as string[]) ?? []).includes(key),
  );

const SETTINGS = (line: string) => `from pydantic_settings import BaseSettings

class AppSettings(BaseSettings):
    ${line}
`;
const PROVIDERS = `class LiteProvider:
    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.data_dir}/pantry.db"

class PgProvider:
    POSTGRES_SERVER: str = "pgmain"
`;
const COMPOSE = (extra: string) => `services:
  pantry:
    build:
      context: ..
    environment:
      DB_ENGINE: sqlite # Options: 'sqlite', 'postgres'
      POSTGRES_SERVER: pgmain
      POSTGRES_PORT: 5432
${extra}`;

const system = (settingsLine: string, extra = '') => ({
  'pyproject.toml':
    '[tool.poetry]\nname = "larder"\nversion = "1.0"\n\n[tool.poetry.dependencies]\npython = "^3.12"\nfastapi = "^0.110"\nsqlalchemy = "^2.0"\npsycopg2-binary = "^2.9"\n',
  'larder/app.py': 'from fastapi import FastAPI\napp = FastAPI()\n',
  'larder/settings.py': SETTINGS(settingsLine),
  'larder/db_providers.py': PROVIDERS,
  'docker/Dockerfile': 'FROM python:3.12\nCOPY . /app\nCMD ["python", "/app/larder/app.py"]\n',
  'docker/docker-compose.yml': COMPOSE(extra),
});

test('a typed settings default DB_ENGINE: str = "sqlite" makes the embedded SQLite the unit’s store', async (t) => {
  const { graph } = await run(
    system("DB_ENGINE: str = \"sqlite\"  # Options: 'sqlite', 'postgres'"),
  );
  const store = graph.relationships.find(
    (r) => r.kind === 'connects_to' && r.target_key.endsWith('-sqlite'),
  );
  t.truthy(store, connections(graph).join('\n'));
  t.is(store?.source_key, 'service:pantry');
  // Named after its owner as deployed too.
  t.truthy(known(graph, 'datastore:pantry-sqlite'), keys(graph).join(' '));
});

test('a comparison or another engine as the default keeps the embedded SQLite an alternative', async (t) => {
  for (const line of ['DB_ENGINE: str = "postgres"', 'USE_LITE = DB_ENGINE == "sqlite"']) {
    const { graph } = await run(system(line));
    t.false(
      connections(graph).some((c) => c.endsWith('-sqlite')),
      `${line}: ${connections(graph).join(', ')}`,
    );
  }
});

test('POSTGRES_SERVER beside DB_ENGINE: sqlite, naming no container of the file, is no entity and no edge', async (t) => {
  const { graph } = await run(system('DB_ENGINE: str = "sqlite"'));
  t.false(keys(graph).includes('service:pgmain'), keys(graph).join(' '));
  t.false(connections(graph).some((c) => c.includes('pgmain')));
});

test('the same variable naming a container the file runs, or beside DB_ENGINE: postgres, stays an edge', async (t) => {
  const pg = `  pgmain:
    image: postgres:16
`;
  const runs = await run(system('DB_ENGINE: str = "sqlite"', pg));
  t.true(
    connections(runs.graph).some((c) => c.startsWith('service:pantry ->') && c.includes('pgmain')),
    connections(runs.graph).join('\n'),
  );
  const files = system('DB_ENGINE: str = "sqlite"');
  files['docker/docker-compose.yml'] = files['docker/docker-compose.yml'].replace(
    'DB_ENGINE: sqlite',
    'DB_ENGINE: postgres',
  );
  const chosen = await run(files);
  t.true(
    connections(chosen.graph).some((c) => c.includes('pgmain')),
    connections(chosen.graph).join('\n'),
  );
});
