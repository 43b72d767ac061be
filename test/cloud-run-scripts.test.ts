/**
 * Cloud Run deployed by a shell script, Google Cloud client libraries and imported Python
 * packages (issue 23, session 16): each rule with a small system written for this test, the
 * case that must be found and the look-alike that must not.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { envEntries, literalPart, readRunScript } from '../analysis/code/cloud-run-scripts';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const DOCKERFILE = 'FROM python:3.12-slim\nCOPY . .\nCMD exec gunicorn app:app\n';

const SETUP = `#!/bin/bash
set -e
gcloud builds submit --tag "\${REGION}-docker.pkg.dev/\${PROJ}/apps/ledger-image" ./backend
retry_until_built $ID "gcloud run deploy ledger \\
    --image "\${REGION}-docker.pkg.dev/\${PROJ}/apps/ledger-image:v1" \\
    --allow-unauthenticated \\
    --region "\${REGION}""

LEDGER_URL=$(gcloud run services describe ledger \\
    --region \${REGION} --format 'value(status.url)')

gcloud run deploy teller-web \\
  --source frontend \\
  --update-env-vars "TELLER_RECEIPTS=\${PROJ}-receipts" \\
  --update-env-vars "LEDGER_ADDR=\${LEDGER_URL}" \\
  --set-env-vars "GREETING=\${OTHER_URL}"
`;

const system = (extra: Record<string, string> = {}) =>
  files({
    'scripts/setup.sh': SETUP,
    'backend/requirements.txt': 'flask\ngoogle-cloud-firestore\n',
    'backend/Dockerfile': DOCKERFILE,
    'backend/app.py': [
      'from flask import Flask',
      'from google.cloud import firestore',
      'from store import rows',
      'db = firestore.Client()',
      'app = Flask(__name__)',
      '',
    ].join('\n'),
    // A folder of its own requirements the backend imports: a package, no service.
    'backend/store/requirements.txt': 'google-cloud-firestore\n',
    'backend/store/__init__.py': '',
    'backend/store/rows.py': 'def read():\n    return []\n',
    'frontend/requirements.txt': 'flask\ngoogle-cloud-storage\n',
    'frontend/Dockerfile': DOCKERFILE,
    'frontend/app.py': [
      'import os',
      'from flask import Flask',
      'from google.cloud import storage',
      'RECEIPTS = os.environ.get("TELLER_RECEIPTS")',
      'receipts = storage.Client().bucket(RECEIPTS)',
      // Not set by any deploy: no bucket.
      'scratch = storage.Client().bucket(os.environ["TELLER_SCRATCH"])',
      'app = Flask(__name__)',
      '',
    ].join('\n'),
    ...extra,
  });

test('a script reads gcloud run deploy, services describe URLs and image builds', (t) => {
  const run = readRunScript(SETUP);
  t.deepEqual(
    run.deploys.map((d) => [d.name, d.source, d.image !== null, d.env.map((e) => e.name)]),
    [
      ['ledger', null, true, []],
      ['teller-web', 'frontend', false, ['TELLER_RECEIPTS', 'LEDGER_ADDR', 'GREETING']],
    ],
  );
  t.is(run.urlVars.get('LEDGER_URL'), 'ledger');
  t.deepEqual([...run.builtFrom.values()], ['./backend']);
  t.deepEqual(envEntries('^;^A=1;B=x,y'), [
    { name: 'A', value: '1' },
    { name: 'B', value: 'x,y' },
  ]);
  t.is(literalPart('${PROJECT}-sessions'), 'sessions');
  t.is(literalPart('${PROJECT}'), null);
});

test('gcloud run deploy declares Cloud Run services joined to their folders, with their URL and store edges', async (t) => {
  const { graph } = await analyzeFiles(system());
  const keys = entityKeys(graph);
  // The deploy names the services: `ledger` (the image built from ./backend) and `teller-web`.
  t.true(keys.includes('service:ledger'), keys.join(' '));
  t.true(keys.includes('service:teller-web'), keys.join(' '));
  t.false(keys.includes('service:backend'));
  t.false(keys.includes('service:frontend'));
  // The imported package folder is no service.
  t.false(keys.includes('service:store'));
  t.deepEqual(connections(graph), [
    'service:ledger -> datastore:firestore',
    'service:teller-web -> datastore:receipts',
    'service:teller-web -> service:ledger',
  ]);
});

test('no deploy script: no Cloud Run names, no bucket named from the environment', async (t) => {
  const input = system().filter((f) => f.path !== 'scripts/setup.sh');
  const { graph } = await analyzeFiles(input);
  const keys = entityKeys(graph);
  t.false(keys.some((k) => k.includes('ledger') || k.includes('teller')));
  t.false(keys.some((k) => k.includes('receipts') || k.includes('scratch')));
  // Firestore needs no name: the client's use is the connection.
  t.true(connections(graph).includes('service:backend -> datastore:firestore'));
  // A bucket call without the storage library is not Cloud Storage.
  const noLib = await analyzeFiles(
    input.map((f) =>
      f.path === 'frontend/app.py'
        ? { ...f, text: 'import boto\nb = conn.bucket("invoices")\n' }
        : f,
    ),
  );
  t.false(entityKeys(noLib.graph).includes('datastore:invoices'));
});
