/** `npm run bundle:workflows [-- <file>]`: writes the workflow bundle (default dist/workflow-bundle.js). */
import fs from 'node:fs';
import path from 'node:path';
import { buildWorkflowBundle } from '../worker/bundle';

async function main(): Promise<void> {
  const out = path.resolve(
    process.argv[2] ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'),
  );
  const code = await buildWorkflowBundle();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  console.log(`workflow bundle: ${out} (${code.length} bytes); set WORKFLOW_BUNDLE=${out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
