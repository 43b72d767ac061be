/**
 * Client libraries a Go program's own code imports, for a unit without a go.mod of its own (an
 * application of a mono-repo module, analysis/code/go-apps.ts). The module's go.mod declares the
 * dependencies of every application in it, so its `client-library` records belong to the module,
 * not to any one program; which program uses the Redis or Kafka client is said by the imports of
 * its own non-test files (`"github.com/go-redis/redis/v8"`). Each such import of a known client
 * (analysis/code/clients.ts) is a `client-library` record of the unit, cited at the import line.
 * A blank import (`_ "github.com/go-sql-driver/mysql"`) only registers a driver: it says nothing
 * of a connection, so it is none.
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { classifyClient } from './clients';
import { isTestPath } from './common';
import { extractGoImports } from './imports';
import { packageKey } from './manifests';
import type { Unit } from './model';

/** `client-library` records of the clients a unit's Go files import (units without a go.mod). */
export function goImportClientEvidence(unit: Unit, files: SourceFile[]): Evidence[] {
  if (unit.manifests.some((m) => m.kind === 'go.mod')) return [];
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    if (!file.path.endsWith('.go') || isTestPath(file.path)) continue;
    for (const imp of extractGoImports(file.text)) {
      if (imp.symbols[0] === '_' || seen.has(imp.spec)) continue;
      const cls = classifyClient('go', imp.spec);
      if (!cls) continue;
      seen.add(imp.spec);
      out.push(
        evidence(
          file,
          { start: imp.line, end: imp.endLine },
          {
            source: 'code',
            provider: 'go-imports',
            kind: 'client-library',
            subject: unit.key,
            relationship: 'uses_client_library',
            object: packageKey('go', imp.spec),
            summary: `${unit.name} uses ${cls.engine} client library ${imp.spec} (imported)`,
            attributes: {
              engine: cls.engine,
              category: cls.category,
              ecosystem: 'go',
              package: imp.spec,
              dev: false,
              detected_via: 'import',
            },
          },
        ),
      );
    }
  }
  return out;
}
