/**
 * Azure Bicep (docs/decisions.md, "Bicep stores"): the datastores and brokers a template
 * declares, as `resource <name> '<Provider/type>@<api>'` or as a call of a registry module
 * (`module <name> 'br/public:avm/res/document-db/database-account:0.6.0'`, Azure Verified
 * Modules). Each becomes a `datastore-declared` / `queue-declared` record keyed by the
 * declaration's symbolic name, with its engine: code using that engine's SDK client then joins
 * it (reconcile-sdk-stores.ts). Child resources (`databaseAccounts/sqlDatabases`, role
 * assignments) declare no store of their own. Read line by line, no expression evaluation.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';

interface StoreClass {
  kind: 'datastore' | 'queue';
  engine: string;
}

/** Resource types (lower-case, no API version) that are stores. */
const RESOURCE_TYPES: Record<string, StoreClass> = {
  'microsoft.documentdb/databaseaccounts': { kind: 'datastore', engine: 'cosmosdb' },
  'microsoft.documentdb/mongoclusters': { kind: 'datastore', engine: 'mongodb' },
  'microsoft.dbforpostgresql/flexibleservers': { kind: 'datastore', engine: 'postgres' },
  'microsoft.dbforpostgresql/servers': { kind: 'datastore', engine: 'postgres' },
  'microsoft.dbformysql/flexibleservers': { kind: 'datastore', engine: 'mysql' },
  'microsoft.dbformysql/servers': { kind: 'datastore', engine: 'mysql' },
  'microsoft.sql/servers': { kind: 'datastore', engine: 'sqlserver' },
  'microsoft.cache/redis': { kind: 'datastore', engine: 'redis' },
  'microsoft.cache/redisenterprise': { kind: 'datastore', engine: 'redis' },
  'microsoft.servicebus/namespaces': { kind: 'queue', engine: 'servicebus' },
  'microsoft.eventhub/namespaces': { kind: 'queue', engine: 'eventhubs' },
};
/** Azure Verified Modules (`avm/res/<provider>/<type>`) of the same resources. */
const AVM_MODULES: Record<string, StoreClass> = {
  'document-db/database-account': { kind: 'datastore', engine: 'cosmosdb' },
  'document-db/mongo-cluster': { kind: 'datastore', engine: 'mongodb' },
  'db-for-postgre-sql/flexible-server': { kind: 'datastore', engine: 'postgres' },
  'db-for-my-sql/flexible-server': { kind: 'datastore', engine: 'mysql' },
  'sql/server': { kind: 'datastore', engine: 'sqlserver' },
  'cache/redis': { kind: 'datastore', engine: 'redis' },
  'cache/redis-enterprise': { kind: 'datastore', engine: 'redis' },
  'service-bus/namespace': { kind: 'queue', engine: 'servicebus' },
  'event-hub/namespace': { kind: 'queue', engine: 'eventhubs' },
};

const DECLARATION = /^\s*(resource|module)\s+([A-Za-z_][A-Za-z0-9_]*)\s+'([^']+)'/;

/** The class of a declared type or module reference, or null. */
export function bicepStoreClass(keyword: string, ref: string): StoreClass | null {
  if (keyword === 'resource') return RESOURCE_TYPES[ref.split('@')[0]!.toLowerCase()] ?? null;
  const avm = /^br(\/public|:[^/]+)?[:/].*?avm\/res\/([a-z0-9-]+\/[a-z0-9-]+):/i.exec(ref);
  return avm ? (AVM_MODULES[avm[2]!.toLowerCase()] ?? null) : null;
}

/** The line (1-based) closing the block that opens on or after `start`, by brace depth. */
function blockEnd(lines: string[], start: number): number {
  let depth = 0;
  let opened = false;
  for (let i = start; i < lines.length; i += 1) {
    const line = lines[i]!.replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/\/\/.*$/, '');
    for (const ch of line) {
      if (ch === '{') {
        depth += 1;
        opened = true;
      } else if (ch === '}') depth -= 1;
    }
    if (opened && depth <= 0) return i + 1;
  }
  return start + 1;
}

/** Store declarations of the Bicep files given. */
export function analyzeBicep(files: SourceFile[]): AnalyzerOutput {
  const out: Evidence[] = [];
  for (const file of files) {
    const lines = file.text.split('\n');
    lines.forEach((line, i) => {
      const m = DECLARATION.exec(line);
      if (!m) return;
      const [, keyword, name, ref] = m as unknown as [string, string, string, string];
      const cls = bicepStoreClass(keyword, ref);
      if (!cls) return;
      const end = blockEnd(lines, i);
      const body = lines.slice(i, end).join('\n');
      // A Cosmos DB account serving the MongoDB API is a MongoDB store to its clients.
      const mongo =
        cls.engine === 'cosmosdb' &&
        (/^\s*kind:\s*'MongoDB'/m.test(body) || /^\s*mongodbDatabases:/m.test(body));
      const engine = mongo ? 'mongodb' : cls.engine;
      out.push(
        evidence(
          file,
          { start: i + 1, end },
          {
            source: 'cloud',
            provider: 'bicep',
            kind: `${cls.kind}-declared`,
            subject: entityKey(cls.kind, name),
            summary: `Bicep ${keyword} ${name} declares ${engine} ${cls.kind} ${name} (${ref})`,
            attributes: {
              cloud: 'azure',
              engine,
              name,
              [keyword === 'resource' ? 'resource_type' : 'module']: ref,
              conditional: /=\s*if\s*\(/.test(line),
            },
          },
        ),
      );
    });
  }
  return { evidence: out, gaps: [] };
}
