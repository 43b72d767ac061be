/**
 * The CLI's generated contract and types match the operation registry: a contract change
 * without `npm run cli:generate` fails here (and the diff names the file to regenerate).
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { GENERATED_DIR, generateCliFiles } from '../scripts/cli-generate';

test('cli/generated is what npm run cli:generate writes from the current registry', async (t) => {
  const fresh = await generateCliFiles();
  t.deepEqual(Object.keys(fresh).sort(), ['api.d.ts', 'openapi.json']);
  for (const [name, text] of Object.entries(fresh)) {
    const file = path.join(GENERATED_DIR, name);
    const onDisk = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    t.true(
      onDisk === text,
      `cli/generated/${name} is stale: run npm run cli:generate and commit it`,
    );
  }
});

test('the drift check can fail: a changed contract produces other files', async (t) => {
  const fresh = await generateCliFiles();
  const doc = JSON.parse(fresh['openapi.json']!);
  delete doc.paths['/v1/scopes'];
  t.not(`${JSON.stringify(doc, null, 2)}\n`, fresh['openapi.json']);
});
