/** The served contract: built once from the registry and cached (it cannot change at run time). */
import { buildOpenApi } from './registry/openapi';
import { OPERATIONS } from './operations';
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const CONTRACT_VERSION: string = (require('../package.json') as { version: string }).version;

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
