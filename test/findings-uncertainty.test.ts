/**
 * One question once (issue 30, item 4): identity conflicts with one shared cause (one build
 * context claimed by many deployables) are one ambiguous_identity case listing every deployable.
 */
import test from 'ava';
import { analyzeFiles } from './helpers/pipeline';
import { uncertaintyCandidates } from '../analysis/uncertainty';

const API = [
  {
    path: 'api/package.json',
    text: JSON.stringify({ name: 'api', private: true, scripts: { start: 'node s.js' } }),
  },
  { path: 'api/Dockerfile', text: 'FROM node:20\nCOPY . .\n' },
];

async function cases(compose: string) {
  const { graph, evidence } = await analyzeFiles([
    ...API,
    { path: 'docker-compose.yml', text: compose },
  ]);
  return {
    graph,
    cases: uncertaintyCandidates({
      entities: graph.entities,
      relationships: graph.relationships,
      evidence,
      missingSources: [],
      conflicts: graph.conflicts,
    }).filter((c) => c.reason === 'ambiguous_identity'),
  };
}

test('four deployables built from one context: one case, naming the shared cause and all four', async (t) => {
  const { graph, cases: found } = await cases(`services:
  web:
    build: ./api
  worker:
    build: ./api
    command: node worker.js
  cron:
    build: ./api
    command: node cron.js
  mailer:
    build: ./api
    command: node mail.js
`);
  t.true((graph.conflicts?.length ?? 0) >= 3, 'reconcile reports each clash');
  t.is(found.length, 1, found.map((c) => c.detail).join('\n'));
  const c = found[0]!;
  const affected = c.alternatives.map((a) => a.value).sort();
  const all = ['service:cron', 'service:mailer', 'service:web', 'service:worker'];
  // Every deployable but the one holding the identity is listed, each with its evidence.
  for (const key of affected) t.true(all.includes(String(key)));
  t.true(affected.length >= 3);
  for (const a of c.alternatives) t.true(a.evidence_ids.length > 0);
  for (const key of affected) t.true(c.detail.includes(String(key)));
  t.regex(c.detail, /One question for all of them/);
  t.true(c.evidence_ids.length >= 4);
  // Deterministic: the same files give the same case.
  const again = (
    await cases(`services:
  web:
    build: ./api
  worker:
    build: ./api
    command: node worker.js
  cron:
    build: ./api
    command: node cron.js
  mailer:
    build: ./api
    command: node mail.js
`)
  ).cases;
  t.is(again[0]?.fingerprint, c.fingerprint);
  t.is(again[0]?.subject_key, c.subject_key);
});

test('services that share nothing raise no case; a lone conflict reads as before', async (t) => {
  const { cases: found } = await cases(`services:
  web:
    build: ./api
  worker:
    build: ./api
    command: node worker.js
  a:
    image: ghcr.io/acme/tool:1.0
  b:
    image: ghcr.io/acme/other:1.0
`);
  t.is(found.length, 1, 'web/worker are one question; unrelated services raise none');
  const { cases: two } = await cases(`services:
  web:
    build: ./api
  worker:
    build: ./api
    command: node worker.js
`);
  t.is(two.length, 1);
  t.regex(two[0]!.detail, /service:web and service:worker/, 'a lone conflict reads as before');
});
