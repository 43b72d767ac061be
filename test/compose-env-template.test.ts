/**
 * The compose project's env template (issue 23, session 14; docs/decisions.md, "The compose
 * project's env template documents its interpolated values") and cargo-xtask packages. File sets
 * are built in memory and run through the analyzers and reconcile as an audit does.
 */
import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

/** Every address is a `${VAR}` the user's `.env` gives. */
const COMPOSE = `services:
  postgres:
    image: postgres:16
  redis:
    image: redis:7
  auth:
    image: example/auth:1.0
  web:
    image: example/web:1.0
  api:
    image: example/api:1.0
    environment:
      - API_DATABASE_URL=\${API_DATABASE_URL}
      - API_REDIS_URI=\${API_REDIS_URI}
      - API_AUTH_BASE_URL=\${API_AUTH_BASE_URL}
      - WEB_URL=\${WEB_URL}
      - RUST_LOG=\${RUST_LOG:-info}
`;
/** The committed template, copied to `.env` by the user; values referencing earlier ones. */
const TEMPLATE = `# Copy this file to .env
FQDN=localhost
SCHEME=http
BASE_URL=\${SCHEME}://\${FQDN}
POSTGRES_HOST=postgres
POSTGRES_USER=postgres
POSTGRES_PASSWORD=password
REDIS_HOST=redis
REDIS_PORT=6379
API_DATABASE_URL=postgres://\${POSTGRES_USER}:\${POSTGRES_PASSWORD}@\${POSTGRES_HOST}:5432/app
API_REDIS_URI=redis://\${REDIS_HOST}:\${REDIS_PORT}
API_AUTH_BASE_URL=http://auth:9999
WEB_URL=\${BASE_URL}
`;

test('a committed *.env defining the interpolated variables resolves them, nested ones too', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'deploy.env': TEMPLATE,
  });
  const edges = connections(graph);
  t.true(edges.includes('service:api -> datastore:postgres'), edges.join('\n'));
  t.true(edges.includes('service:api -> datastore:redis'));
  t.true(edges.includes('service:api -> service:auth'));
  // `WEB_URL` is documented as the public URL (localhost): no call to the `web` container,
  // although the variable's name names it.
  t.false(edges.includes('service:api -> service:web'));
  const cited = evidence.filter((e) => e.attributes.documented_by === 'deploy.env');
  t.true(cited.length >= 3);
});

test('without the template the variable name alone still names the service', async (t) => {
  const { graph } = await analyzeFileMap({ 'docker-compose.yml': COMPOSE });
  const edges = connections(graph);
  t.true(edges.includes('service:api -> service:web'));
  t.false(edges.includes('service:api -> datastore:postgres'));
});

test('a committed .env is the file in effect: the template is not read', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'deploy.env': TEMPLATE,
    '.env': 'API_DATABASE_URL=postgres://u:p@db.example.com:5432/app\n',
  });
  const edges = connections(graph);
  t.false(edges.includes('service:api -> datastore:postgres'));
  t.false(edges.includes('service:api -> datastore:redis'));
});

test('an env file defining few of the interpolated variables is no template', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'common.env': 'API_AUTH_BASE_URL=http://auth:9999\nOTHER=1\n',
  });
  t.false(connections(graph).includes('service:api -> service:auth'));
});

test('a template in another folder is not the project’s', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': COMPOSE,
    'deploy/deploy.env': TEMPLATE,
  });
  t.false(connections(graph).includes('service:api -> datastore:postgres'));
});

const CARGO_WORKSPACE = `[workspace]
members = ["server", "xtask"]
`;
const SERVER_CARGO = `[package]
name = "server"
version = "0.1.0"

[dependencies]
actix-web = "4"
`;
const XTASK_CARGO = `[package]
name = "xtask"
version = "0.1.0"

[dependencies]
anyhow = "1.0"
tokio = { version = "1", features = ["full"] }
`;

test('a cargo-xtask package is build automation, not a service', async (t) => {
  const { graph } = await analyzeFileMap({
    'Cargo.toml': CARGO_WORKSPACE,
    'server/Cargo.toml': SERVER_CARGO,
    'server/src/main.rs': 'fn main() { actix_web::HttpServer::new(|| todo!()); }\n',
    'xtask/Cargo.toml': XTASK_CARGO,
    'xtask/src/main.rs': 'fn main() { std::process::Command::new("cargo").status().unwrap(); }\n',
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:server'), keys.join('\n'));
  t.false(keys.includes('service:xtask'));
});

test('an xtask package a deployment builds and runs stays a service', async (t) => {
  const { graph } = await analyzeFileMap({
    'Cargo.toml': CARGO_WORKSPACE,
    'server/Cargo.toml': SERVER_CARGO,
    'server/src/main.rs': 'fn main() {}\n',
    'xtask/Cargo.toml': XTASK_CARGO,
    'xtask/src/main.rs': 'fn main() {}\n',
    'xtask/Dockerfile':
      'FROM rust:1\nCOPY . .\nRUN cargo build --release\nCMD ["./target/release/xtask"]\n',
    'docker-compose.yml': 'services:\n  xtask:\n    build: ./xtask\n',
  });
  const keys = entityKeys(graph);
  t.true(keys.includes('service:xtask'), keys.join('\n'));
});
