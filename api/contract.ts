/** The served contract: built once from the registry and cached (it cannot change at run time). */
import { buildOpenApi } from './registry/openapi';
import { OPERATIONS } from './operations';
import fs from 'node:fs';
import path from 'node:path';
import { CODE_DIR } from '../platform/code-dir';

export const CONTRACT_VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(CODE_DIR, 'package.json'), 'utf8')) as { version: string }
).version;

const cache = new Map<string, Record<string, unknown>>();

export function contractDocument(serverUrl?: string): Record<string, unknown> {
  const key = serverUrl ?? '';
  let doc = cache.get(key);
  if (!doc) {
    doc = buildOpenApi(OPERATIONS, { version: CONTRACT_VERSION, serverUrl });
    cache.set(key, doc);
  }
  return doc;
}
