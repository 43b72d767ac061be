/**
 * Orchestration as code (.NET Aspire). The AppHost of a unit classed `orchestrator` declares the
 * system's resources and their references in C#; this reader takes them as deployment
 * declarations (docs/decisions.md, "Orchestration as code"):
 * - `builder.AddProject<Projects.Catalog_Api>("catalog-api")` (or `AddProject("name", "../x.csproj")`),
 *   `AddContainer`, `AddNpmApp`/`AddNodeApp`/`AddDockerfile`/`AddExecutable`..., `AddYarp` are
 *   services; a project resource is aliased to its code unit, an app resource to the unit of its
 *   directory;
 * - `AddRedis`, `AddPostgres(...).AddDatabase(...)`, `AddRabbitMQ`, `AddKafka`,
 *   `AddAzureStorage(...).AddBlobs(...)`... are datastores / queues / buckets with an engine (a
 *   chained `AddDatabase` makes the database the chain's value, the server its parent);
 * - an `Add*` extension the AppHost defines for a container, executable or project resource type
 *   adds a resource named by its first argument; an Azure Storage account run as the emulator is
 *   a datastore, its blob containers stores of it (aspire-custom.ts, issue 23, session 15);
 * - `.WithReference(x)`, `.WithEnvironment("X", x[.GetEndpoint(..)])` and YARP routes to `x` on a
 *   service are `connects_to` x (an address the service's code only uses for a redirect carries
 *   its `address_role`); `WaitFor(x)` is start order only.
 * In the other units, Aspire client integrations (`AddRedisClient("cache")`,
 * `AddNpgsqlDbContext<T>("catalogdb")`, `AddRabbitMQClient("messaging")`...) connect the unit to
 * the named resource.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { classifyImage } from '../cloud/common';
import { evidence } from '../shared/evidence';
import { parseImageRef } from '../shared/images';
import { basename, dirname, joinPath, stem } from '../shared/paths';
import { isIdentityProviderPackage } from './address-roles';
import { configKey, configReadRoles, customResources, type CustomResource } from './aspire-custom';
import { isAspireHost } from './classify';
import { isTestPath } from './common';
import type { CodeModel, Unit } from './model';
import { closeParen, statements, stripComments } from './statements';

type Kind = 'service' | 'datastore' | 'queue' | 'bucket';

interface Resource {
  key: string;
  kind: Kind;
  engine: string | null;
  /** A YARP gateway (`AddYarp`): resources passed to its route-configuring calls are routes. */
  gateway?: boolean;
  /** The code unit a project or app resource runs (its configuration reads say what it calls). */
  unit?: Unit | null;
  /** An Azure Storage account run as the Azurite emulator (`RunAsEmulator`). */
  emulated?: boolean;
}

/** Hosting methods of backing resources: kind and engine. */
const BACKING: Record<string, [Kind, string]> = {
  AddRedis: ['datastore', 'redis'],
  AddAzureRedis: ['datastore', 'redis'],
  AddValkey: ['datastore', 'valkey'],
  AddGarnet: ['datastore', 'garnet'],
  AddPostgres: ['datastore', 'postgres'],
  AddAzurePostgresFlexibleServer: ['datastore', 'postgres'],
  AddSqlServer: ['datastore', 'sqlserver'],
  AddAzureSqlServer: ['datastore', 'sqlserver'],
  AddMySql: ['datastore', 'mysql'],
  AddOracle: ['datastore', 'oracle'],
  AddMongoDB: ['datastore', 'mongodb'],
  AddAzureCosmosDB: ['datastore', 'cosmosdb'],
  AddElasticsearch: ['datastore', 'elasticsearch'],
  AddQdrant: ['datastore', 'qdrant'],
  AddMilvus: ['datastore', 'milvus'],
  AddRabbitMQ: ['queue', 'rabbitmq'],
  AddKafka: ['queue', 'kafka'],
  AddNats: ['queue', 'nats'],
  AddAzureServiceBus: ['queue', 'azure-service-bus'],
  AddAzureEventHubs: ['queue', 'azure-event-hubs'],
};

/** Children of an Azure Storage account: the account itself is no entity. */
const STORAGE_CHILDREN: Record<string, [Kind, string]> = {
  AddBlobs: ['bucket', 'azure-blob'],
  AddBlobContainer: ['bucket', 'azure-blob'],
  AddQueues: ['queue', 'azure-queue'],
  AddTables: ['datastore', 'azure-table'],
};

/** Children of a server resource that are the same engine (a database, a queue, a topic). */
const CHILDREN = new Set(['AddDatabase', 'AddQueue', 'AddTopic', 'AddServiceBusQueue', 'AddHub']);

/** Application resources named by their directory or file (relative to the AppHost). */
const APPS = new Set([
  'AddNpmApp',
  'AddNodeApp',
  'AddJavaScriptApp',
  'AddViteApp',
  'AddPythonApp',
  'AddUvicornApp',
  'AddDockerfile',
  'AddExecutable',
  'AddGolangApp',
  'AddJavaApp',
  'AddSpringApp',
]);

/** Client integrations in service code: the named resource's kind and engine. */
const CLIENTS: Array<[RegExp, Kind, string]> = [
  [/^Add(Keyed)?Redis(Client|DistributedCache|OutputCache)$/, 'datastore', 'redis'],
  [/^Add(Keyed)?Npgsql(DbContext|DataSource)$/, 'datastore', 'postgres'],
  [/^Add(Keyed)?SqlServer(DbContext|Client)$/, 'datastore', 'sqlserver'],
  [/^Add(Keyed)?MySql(DbContext|DataSource)$/, 'datastore', 'mysql'],
  [/^Add(Keyed)?Oracle(DatabaseDbContext|Client)$/, 'datastore', 'oracle'],
  [/^Add(Keyed)?MongoDB(Client|Database)$/, 'datastore', 'mongodb'],
  [/^Add(Keyed)?(AzureCosmos(Client|DbContext)|CosmosDbContext)$/, 'datastore', 'cosmosdb'],
  [/^Add(Keyed)?ElasticsearchClient$/, 'datastore', 'elasticsearch'],
  [/^Add(Keyed)?QdrantClient$/, 'datastore', 'qdrant'],
  [/^Add(Keyed)?AzureTableClient$/, 'datastore', 'azure-table'],
  [/^Add(Keyed)?RabbitMQClient$/, 'queue', 'rabbitmq'],
  [/^Add(Keyed)?Kafka(Producer|Consumer)$/, 'queue', 'kafka'],
  [/^Add(Keyed)?NatsClient$/, 'queue', 'nats'],
  [/^Add(Keyed)?AzureServiceBusClient$/, 'queue', 'azure-service-bus'],
  [/^Add(Keyed)?AzureQueueClient$/, 'queue', 'azure-queue'],
  [/^Add(Keyed)?AzureBlobClient$/, 'bucket', 'azure-blob'],
];

/** A file-based AppHost (`apphost.cs` with `#:sdk Aspire.AppHost.Sdk`), without a project file. */
const FILE_HOST = /^\uFEFF?#:sdk\s+Aspire\.AppHost\.Sdk\b/m;

interface Call {
  name: string;
  generic: string | null;
  args: string;
  /** Offset of the method name within the statement. */
  at: number;
}

/** `receiver.A(...).B<T>(...)`: the receiver identifier and the chained calls. */
function chain(expr: string): { receiver: string; receiverAt: number; calls: Call[] } | null {
  const head = /^\s*([A-Za-z_]\w*)\s*(?=\.)/.exec(expr);
  if (!head) return null;
  const calls: Call[] = [];
  let i = head[0].length;
  while (i < expr.length) {
    const m = /^\s*\.\s*([A-Za-z_]\w*)\s*(<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>)?\s*\(/.exec(
      expr.slice(i),
    );
    if (!m) break;
    const open = i + m[0].length - 1;
    const close = closeParen(expr, open);
    if (close < 0) break;
    calls.push({
      name: m[1] ?? '',
      generic: m[2] ? m[2].slice(1, -1).trim() : null,
      args: expr.slice(open + 1, close - 1),
      at: i + m[0].indexOf(m[1] ?? ''),
    });
    i = close;
  }
  return calls.length ? { receiver: head[1] ?? '', receiverAt: head.index, calls } : null;
}

/** The string literals among a call's arguments, in order. */
function strings(args: string): string[] {
  return [...args.matchAll(/"((?:[^"\\\n]|\\.)*)"/g)].map((m) => m[1] ?? '');
}

/** Arguments split at top-level commas. */
function splitArgs(args: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < args.length; i++) {
    const c = args[i] ?? '';
    if (c === '"') {
      const end = /^"(?:[^"\\\n]|\\.)*"/.exec(args.slice(i));
      if (end) {
        cur += end[0];
        i += end[0].length - 1;
        continue;
      }
    }
    if ('([{<'.includes(c)) depth++;
    if (')]}>'.includes(c) && depth > 0) depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}

const csFiles = (files: SourceFile[]) =>
  files.filter((f) => f.path.endsWith('.cs') && !isTestPath(f.path));

/** The code unit a project resource names: by its csproj file name, else its directory. */
function projectUnit(model: CodeModel, project: string): Unit | null {
  const want = project.toLowerCase();
  return (
    model.units.find((u) =>
      u.manifests.some((m) => m.kind === 'csproj' && stem(m.path).toLowerCase() === want),
    ) ?? null
  );
}

/** The AppHost: its name (in summaries), directory (app paths are relative to it) and id. */
interface Host {
  name: string;
  dir: string;
  id: string;
}

/** What an AppHost's files define and its resources' code reads, computed once per AppHost. */
interface HostContext {
  /** The `Add*` hosting extensions the AppHost defines (aspire-custom.ts). */
  custom: Map<string, CustomResource>;
  /** The role of an address handed to `unit` under `variable`, when every read of it has one. */
  handedRole: (unit: Unit, variable: string) => string | null;
}

function hostContext(model: CodeModel, files: SourceFile[]): HostContext {
  const reads = new Map<string, Map<string, Array<string | null>>>();
  return {
    custom: customResources(files),
    handedRole: (unit, variable) => {
      let byKey = reads.get(unit.key);
      if (!byKey) {
        const idp = unit.manifests.some((m) =>
          m.dependencies.some((d) => isIdentityProviderPackage(d.name)),
        );
        byKey = configReadRoles(csFiles(model.filesByUnit.get(unit.key) ?? []), idp);
        reads.set(unit.key, byKey);
      }
      const roles = byKey.get(configKey(variable)) ?? [];
      return roles.length > 0 && roles.every((r) => r !== null) ? roles[0]! : null;
    },
  };
}

/**
 * Azure Storage accounts run as the Azurite emulator: the names of `AddAzureStorage(name)` chains
 * that call `RunAsEmulator`, directly or later on the variable they are assigned to.
 */
function emulatedStorage(text: string): Set<string> {
  const names = new Set<string>();
  const byVar = new Map<string, string>();
  const emulatedVars = new Set<string>();
  for (const st of statements(text)) {
    const assign = /^\s*(?:var|[\w.]+(?:<[^;=]*>)?)\s+([A-Za-z_]\w*)\s*=\s*(?!=)/.exec(st.text);
    const ch = chain(st.text.slice(assign ? assign[0].length : 0));
    if (!ch) continue;
    const storage = ch.calls.find((c) => c.name === 'AddAzureStorage');
    const name = storage ? (strings(splitArgs(storage.args)[0] ?? '')[0] ?? null) : null;
    const runs = ch.calls.some((c) => c.name === 'RunAsEmulator');
    if (name !== null && runs) names.add(name);
    else if (name !== null && assign) byVar.set(assign[1] ?? '', name);
    else if (runs && !storage) emulatedVars.add(ch.receiver);
  }
  for (const v of emulatedVars) {
    const name = byVar.get(v);
    if (name !== undefined) names.add(name);
  }
  return names;
}

function appHostEvidence(
  model: CodeModel,
  unit: Host,
  file: SourceFile,
  host: HostContext,
): Evidence[] {
  const out: Evidence[] = [];
  const text = stripComments(file.text);
  const emulated = emulatedStorage(text);
  const vars = new Map<string, Resource>();
  const at = (offset: number) => {
    const line = lineAt(text, offset);
    return { start: line, end: line };
  };
  const declare = (
    name: string,
    kind: Kind,
    engine: string | null,
    offset: number,
    method: string,
    extra: Record<string, unknown>,
  ): Resource => {
    const key = entityKey(kind, name);
    out.push(
      evidence(file, at(offset), {
        source: 'code',
        provider: 'aspire',
        kind: kind === 'service' ? 'service-declared' : `${kind}-declared`,
        subject: key,
        summary: `Aspire AppHost ${unit.name} declares ${kind} ${name} (${method})`,
        attributes: {
          resource: name,
          method,
          apphost: unit.id,
          ...(engine ? { engine } : {}),
          ...extra,
        },
      }),
    );
    return { key, kind, engine };
  };
  const connect = (
    from: Resource,
    to: Resource,
    offset: number,
    via: string,
    variable?: string,
    role?: string | null,
  ) => {
    if (from.kind !== 'service' || from.key === to.key) return;
    out.push(
      evidence(file, at(offset), {
        source: 'code',
        provider: 'aspire',
        kind: 'resource-reference',
        subject: from.key,
        relationship: 'connects_to',
        object: to.key,
        summary: `Aspire AppHost ${unit.name}: ${from.key} references ${to.key} (${via})`,
        attributes: {
          via,
          apphost: unit.id,
          ...(variable ? { variable } : {}),
          // Every read of the variable by the receiver's code has this role (aspire-custom.ts).
          ...(role ? { address_role: role } : {}),
        },
      }),
    );
  };
  /**
   * A resource named by an argument: `x`, `x.GetEndpoint("http")`, `x.Resource...`, or the first
   * resource interpolated into a string (`$"{x.GetEndpoint("http")}/api"`).
   */
  const resourceOf = (arg: string): Resource | null => {
    if (/^\s*(\$@?|@\$)"/.test(arg)) {
      for (const m of arg.matchAll(/\{\s*([A-Za-z_]\w*)/g)) {
        const r = vars.get(m[1] ?? '');
        if (r) return r;
      }
      return null;
    }
    const m = /^\s*([A-Za-z_]\w*)\b/.exec(arg);
    return m ? (vars.get(m[1] ?? '') ?? null) : null;
  };

  /** String constants (`var dbName = "catalog";`) resource names may be given by. */
  const consts = new Map<string, string>();
  const nameOf = (arg: string): string | null => {
    const lit = /^\s*"((?:[^"\\\n]|\\.)*)"\s*$/.exec(arg);
    if (lit) return lit[1] ?? null;
    const id = /^\s*([A-Za-z_]\w*)\s*$/.exec(arg);
    return id ? (consts.get(id[1] ?? '') ?? null) : null;
  };
  for (const st of statements(text)) {
    const constant =
      /^\s*(?:var|string|const\s+string)\s+([A-Za-z_]\w*)\s*=\s*"([^"\\\n]*)"\s*$/.exec(st.text);
    if (constant) consts.set(constant[1] ?? '', constant[2] ?? '');
    const assign = /^\s*(?:var|[\w.]+(?:<[^;=]*>)?)\s+([A-Za-z_]\w*)\s*=\s*(?!=)/.exec(st.text);
    const exprStart = assign ? assign[0].length : 0;
    const ch = chain(st.text.slice(exprStart));
    if (!ch) continue;
    const base = st.start + exprStart;
    let current: Resource | null = vars.get(ch.receiver) ?? null;
    for (const call of ch.calls) {
      const offset = base + call.at;
      const args = splitArgs(call.args);
      const name = nameOf(args[0] ?? '');
      const firstIsName = name !== null;
      if (call.name === 'AddProject' && firstIsName) {
        const generic = call.generic?.replace(/^global::/, '') ?? null;
        const pathArg = strings(args[1] ?? '')[0] ?? null;
        const project = generic
          ? (generic.split('.').pop() ?? '').replace(/_/g, '.')
          : pathArg
            ? stem(basename(pathArg.replace(/\\/g, '/')))
            : null;
        const code = project ? projectUnit(model, project) : null;
        const aliases = [...new Set([project, code?.name].filter((a): a is string => !!a))];
        current = declare(name, 'service', null, offset, call.name, {
          ...(project ? { project } : {}),
          aliases,
        });
        current.unit = code;
      } else if (APPS.has(call.name) && firstIsName) {
        const rel = (strings(args[1] ?? '')[0] ?? '').replace(/\\/g, '/');
        const dir = rel ? joinPath(unit.dir, rel) : null;
        const target = dir === null ? null : (model.unitByDir.get(dir) ?? null);
        const code = target ?? (dir === null ? null : (model.unitByDir.get(dirname(dir)) ?? null));
        current = declare(name, 'service', null, offset, call.name, {
          ...(dir !== null ? { dir } : {}),
          ...(code ? { aliases: [code.name] } : {}),
        });
        current.unit = code;
      } else if (call.name === 'AddContainer' && firstIsName) {
        const image = strings(args[1] ?? '')[0] ?? null;
        const cls = image ? classifyImage(parseImageRef(image)) : null;
        current = cls
          ? declare(name, cls.kind, cls.engine, offset, call.name, { image })
          : declare(name, 'service', null, offset, call.name, image ? { image } : {});
      } else if (call.name === 'AddYarp' && firstIsName) {
        current = { ...declare(name, 'service', null, offset, call.name, {}), gateway: true };
      } else if (BACKING[call.name] && firstIsName) {
        const [kind, engine] = BACKING[call.name]!;
        current = declare(name, kind, engine, offset, call.name, {});
      } else if (call.name === 'AddAzureStorage' && firstIsName && emulated.has(name)) {
        // Run as the Azurite emulator: the account is that container, a datastore (as the
        // Azurite image is, cloud/common.ts), and its children are stores it serves.
        current = {
          ...declare(name, 'datastore', 'azurite', offset, call.name, { emulator: 'azurite' }),
          emulated: true,
        };
      } else if (call.name === 'AddAzureStorage' && firstIsName) {
        // The account is no entity; its children (blobs, queues, tables) are.
        current = { key: '', kind: 'bucket', engine: 'azure-storage' };
      } else if (STORAGE_CHILDREN[call.name] && firstIsName && current) {
        const [kind, engine] = STORAGE_CHILDREN[call.name]!;
        // An emulated account's blob containers are stores of the Azurite container it runs.
        current = current.emulated
          ? declare(name, kind === 'bucket' ? 'datastore' : kind, engine, offset, call.name, {
              parent: current.key,
            })
          : declare(name, kind, engine, offset, call.name, {});
      } else if (CHILDREN.has(call.name) && firstIsName && current && current.kind !== 'service') {
        const parent = current.key;
        const database = strings(args[1] ?? '')[0];
        current = declare(name, current.kind, current.engine, offset, call.name, {
          ...(parent ? { parent } : {}),
          ...(database ? { database } : {}),
        });
      } else if (call.name === 'WithReference' && current) {
        const to = resourceOf(args[0] ?? '');
        if (to && to.key) connect(current, to, offset, 'WithReference');
      } else if (call.name === 'WithEnvironment' && current && args.length >= 2) {
        const to = resourceOf(args[1] ?? '');
        const role = name && current.unit ? host.handedRole(current.unit, name) : null;
        if (to && to.key) connect(current, to, offset, 'WithEnvironment', name ?? undefined, role);
      } else if (host.custom.has(call.name) && firstIsName) {
        // A resource added by a hosting extension the AppHost defines (aspire-custom.ts).
        const custom = host.custom.get(call.name)!;
        const cls = custom.image ? classifyImage(parseImageRef(custom.image)) : null;
        const extra = { custom: custom.path, ...(custom.image ? { image: custom.image } : {}) };
        current = cls
          ? declare(name, cls.kind, cls.engine, offset, call.name, extra)
          : declare(name, 'service', null, offset, call.name, extra);
      } else if (call.name === 'WithConfiguration' && current) {
        // YARP: routes to resources (`yarp.AddRoute("/api/{**catch-all}", catalog)`).
        for (const m of call.args.matchAll(/\.\s*AddRoute\s*\(/g)) {
          const open = call.args.indexOf('(', m.index);
          const close = closeParen(call.args, open);
          if (close < 0) continue;
          for (const a of splitArgs(call.args.slice(open + 1, close - 1))) {
            const to = resourceOf(a);
            if (to && to.key) connect(current, to, offset, 'YARP route');
          }
        }
      } else if (current?.gateway && !/^(WaitFor|WithParentRelationship)/.test(call.name)) {
        // A gateway's own route helper (`.ConfigureBffRoutes(catalogApi, orderingApi)`).
        for (const a of args) {
          const to = /^\s*[A-Za-z_]\w*\s*$/.test(a) ? resourceOf(a) : null;
          if (to && to.key) connect(current, to, offset, 'YARP route');
        }
      }
    }
    if (assign && current) vars.set(assign[1] ?? '', current);
  }
  return out;
}

/**
 * `declared`: the key each resource name has in the AppHosts (an emulated storage account's blob
 * container is a datastore, not the bucket the client integration's engine suggests).
 */
function clientEvidence(unit: Unit, file: SourceFile, declared: Map<string, string>): Evidence[] {
  const out: Evidence[] = [];
  const text = stripComments(file.text);
  for (const m of text.matchAll(
    /\.\s*(Add\w+)\s*(?:<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>)?\s*\(\s*(?:connectionName\s*:\s*)?"([^"\n]+)"/g,
  )) {
    const rule = CLIENTS.find(([re]) => re.test(m[1] ?? ''));
    if (!rule) continue;
    const [, kind, engine] = rule;
    const name = m[2] ?? '';
    const line = lineAt(text, m.index + m[0].indexOf(m[1] ?? ''));
    out.push(
      evidence(
        file,
        { start: line, end: line },
        {
          source: 'code',
          provider: 'aspire',
          kind: 'resource-reference',
          subject: unit.key,
          relationship: 'connects_to',
          object: declared.get(name) ?? entityKey(kind, name),
          summary: `${unit.name} uses the Aspire ${engine} client integration for ${name} (${m[1] ?? ''})`,
          attributes: { via: m[1], engine, resource: name },
        },
      ),
    );
  }
  return out;
}

/**
 * Evidence of the Aspire AppHosts (orchestrator units and file-based AppHosts) and of client
 * integrations in the other .NET units.
 */
export function aspireEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  const hostFiles = csFiles(model.files).filter((f) => FILE_HOST.test(f.text));
  for (const file of hostFiles) {
    const dir = dirname(file.path);
    const name = `${basename(dir) || 'root'}/${basename(file.path)}`;
    out.push(
      ...appHostEvidence(model, { name, dir, id: file.path }, file, hostContext(model, [file])),
    );
  }
  const clients: Array<[Unit, SourceFile[]]> = [];
  for (const unit of model.units) {
    const files = model.filesByUnit.get(unit.key) ?? [];
    const host = unit.manifests.some(
      (m) => m.kind === 'csproj' && isAspireHost(model.fileByPath.get(m.path)?.text ?? ''),
    );
    if (!unit.manifests.some((m) => m.kind === 'csproj')) continue;
    const own = csFiles(files).filter((f) => !hostFiles.includes(f));
    if (!host) {
      clients.push([unit, own]);
      continue;
    }
    const context = hostContext(model, own);
    for (const file of own)
      out.push(
        ...appHostEvidence(model, { name: unit.name, dir: unit.dir, id: unit.key }, file, context),
      );
  }
  // The client integrations, once every AppHost's resources are known.
  const declared = new Map<string, string>();
  for (const e of out) {
    const name = e.attributes.resource;
    // A backing resource only: a client integration never names a service.
    if (
      /^(datastore|queue|bucket)-declared$/.test(e.evidence_kind) &&
      typeof name === 'string' &&
      !declared.has(name)
    )
      declared.set(name, e.subject_key);
  }
  for (const [unit, own] of clients)
    for (const file of own) out.push(...clientEvidence(unit, file, declared));
  return out;
}
