import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';

// A deployment of prebuilt images, and a folder building an all-in-one image of the same system
// that no compose service, workload or CI build runs (docs/decisions.md, issue 23, session 14).
const compose = [
  'services:',
  '  db:',
  '    image: postgres:16',
  '  api:',
  '    image: acme/api:1.2.0',
  '    environment:',
  '      DATABASE_URL: postgres://acme:pw@db:5432/acme',
  '    ports: ["3000:3000"]',
  '  front:',
  '    image: acme/front:1.2.0',
  '',
].join('\n');
const allInOne = [
  'FROM ruby:3.3-slim',
  'COPY runner.sh /app/runner.sh',
  'EXPOSE 80',
  'EXPOSE 3000',
  'ENTRYPOINT ["/app/runner.sh"]',
  '',
].join('\n');
const services = (g: { entities: Array<{ canonical_key: string; kind: string }> }) =>
  g.entities.filter((e) => e.kind === 'service').map((e) => e.canonical_key);

test('a Dockerfile no deployment runs, beside a deployment of prebuilt images, is no service', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'docker-compose.yml': compose,
    'single/Dockerfile': allInOne,
  });
  t.deepEqual(services(graph).sort(), ['service:api', 'service:front']);
  // Its records stay evidence.
  t.true(evidence.some((e) => e.evidence_kind === 'dockerfile-declared'));
  t.true(graph.relationships.some((r) => r.source_key === 'service:api'));
});

test('a lone Dockerfile that exposes a port stays a service when the repository deploys nothing', async (t) => {
  const { graph } = await analyzeFileMap({ 'single/Dockerfile': allInOne });
  t.deepEqual(services(graph), ['service:single']);
});

test('a Dockerfile a compose service builds stays that service', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': compose + '  single:\n    build: ./single\n',
    'single/Dockerfile': allInOne,
  });
  t.true(services(graph).includes('service:single'));
});

test('beside a compose file that builds every service (no prebuilt image), an unrun Dockerfile stays', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': 'services:\n  web:\n    build: ./web\n',
    'web/Dockerfile': 'FROM node:20\nEXPOSE 8080\n',
    'single/Dockerfile': allInOne,
  });
  t.true(services(graph).includes('service:single'));
});
