/**
 * A store named by its bare compose service name in a connection variable (docs/decisions.md,
 * "A store named by its bare compose service name"). A client's connection setting may be a host
 * alone: StackExchange.Redis takes `basketdata` as a whole configuration string (a host list),
 * RabbitMQ's `ConnectionFactory { HostName = ... }` a host name, and a compose file hands
 * `ConnectionString=${REDIS_DB:-basketdata}` or `EventBusConnection=rabbitmq`. No scheme, port or
 * `Host=` key says the value is an address, so extractHosts (common.ts) reads a bare value only
 * under a host-naming variable (`*_HOST`, `*_ADDR`...).
 *
 * Here a bare value (after `${VAR:-default}` interpolation) is an address when both hold:
 * - the variable's name ends in a connection word (`ConnectionString`, `EventBusConnection`,
 *   `REDIS_CONN`, `CACHE_CONN_STR`): the setting a client connects with;
 * - the value is exactly the name of a service of the same compose project whose image is a
 *   well-known datastore or broker (classifyImage): Compose's DNS answers that name with the
 *   store's container, and nothing else in the project answers it.
 * A bare service name in any other variable (`APP_NAME=orders`, `EventBus=rabbitmq`), or naming
 * an application service, is no address: the name alone gives the value no role.
 */
import { entityKey } from '../evidence';
import { parseImageRef } from '../shared/images';
import { asString, isRecord } from '../shared/values';
import { classifyImage, engineOfWord } from './common';
import type { ComposeFile } from './compose-merge';
import { interpolate } from './compose-values';
import type { EnvFinding } from './env';

/** A variable holding a client's connection setting, by its last words (upper snake case). */
const CONNECTION_VARIABLE =
  /(^|_)(CONNECTION|CONNECTION_STRING|CONNECTIONSTRING|CONN|CONN_STR|CONNSTR)$/;
/** A compose service name (Compose allows `[a-zA-Z0-9._-]`); one label, read whole. */
const SERVICE_NAME = /^[a-z0-9][a-z0-9._-]*$/i;

/** `EventBusConnection`, `Redis__ConnectionString` -> `EVENT_BUS_CONNECTION`, `REDIS_CONNECTION_STRING`. */
function upperSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
}

/** The files `docker compose up` reads without `-f`: `compose.yaml` and its override (any spelling). */
const DEFAULT_FILE = /^(docker-)?compose(\.override)?\.ya?ml$/;
const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
/** True for a file `docker compose up` reads without `-f` in its folder. */
export const isDefaultComposeFile = (path: string): boolean => DEFAULT_FILE.test(baseName(path));

/**
 * Services of a compose project whose image (interpolated) is a well-known datastore or broker,
 * with the engine each runs.
 * When the folder holds Compose's default files, only those count: a service declared only in
 * an alternative file (`docker-compose.prod.yml`, `docker-compose-tests.yml`, read with `-f`)
 * answers its name only in that variant.
 */
export function storeServiceNames(
  files: ComposeFile[],
  vars: Map<string, string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const defaults = files.filter((cf) => DEFAULT_FILE.test(baseName(cf.file.path)));
  for (const cf of defaults.length > 0 ? defaults : files) {
    for (const [name, svc] of Object.entries(cf.services)) {
      if (!isRecord(svc)) continue;
      const raw = asString(svc.image);
      if (!raw) continue;
      const image = interpolate(raw, vars);
      if (!image || image.includes('$')) continue;
      const cls = classifyImage(parseImageRef(image));
      if (cls && (cls.kind === 'datastore' || cls.kind === 'queue')) out.set(name, cls.engine);
    }
  }
  return out;
}

/**
 * The finding for a connection variable whose value is exactly a store service's name, or null.
 * `value` is the value Compose passes (interpolated); `written` the value as written.
 */
export function storeNameReference(
  variable: string,
  value: string,
  written: string | null,
  stores: ReadonlyMap<string, string>,
): EnvFinding | null {
  const v = value.trim();
  if (!SERVICE_NAME.test(v) || !stores.has(v)) return null;
  if (!CONNECTION_VARIABLE.test(upperSnake(variable))) return null;
  return {
    kind: 'env-reference',
    relationship: 'connects_to',
    object: entityKey('service', v),
    summary: `reads ${variable}=${v} -> store service ${v} (a connection setting naming the service)`,
    attributes: {
      variable,
      value: v,
      source: 'environment',
      host: v,
      port: null,
      scheme: null,
      resolution: 'store-service-name',
      ...(written !== null && written !== v ? { interpolated: 'dotenv-interpolation' } : {}),
    },
  };
}

/** An address variable's last word: `ELASTICSEARCH_HOST`, `MONGO_URL`, `KAFKA_SERVICE_ADDR`. */
const ADDRESS_WORD = /_(ADDR|ADDRESS|URL|URI|HOST|HOSTNAME|ENDPOINT)$/;

/**
 * The stores of each engine of a compose project (`storeServiceNames`), computed once per
 * project: `elasticsearch` -> [`search`].
 */
export function storesByEngine(stores: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, engine] of stores) {
    if (!engine) continue;
    const list = out.get(engine) ?? [];
    list.push(name);
    out.set(engine, list);
  }
  return out;
}

/**
 * The finding for an address variable whose value the repository leaves unknown (passed through
 * with no value, `${VAR}` with no `.env`) and whose prefix is an engine's name
 * (`ELASTICSEARCH_HOST`, `POSTGRESQL_HOST`, `MONGO_URL`): the project's one store of that engine
 * (docs/decisions.md, "An address variable named for an engine"). Null when the project runs no
 * store of that engine or several (which one is unknown), or when that store is the service itself.
 */
export function engineNamedReference(
  variable: string,
  self: string,
  byEngine: ReadonlyMap<string, string[]>,
): EnvFinding | null {
  if (!ADDRESS_WORD.test(variable)) return null;
  const prefix = variable.replace(ADDRESS_WORD, '').replace(/_SERVICE$/, '');
  if (!/^[A-Z][A-Z0-9]*$/.test(prefix)) return null;
  const cls = engineOfWord(prefix);
  if (!cls) return null;
  const named = byEngine.get(cls.engine);
  if (named?.length !== 1 || named[0] === self) return null;
  const store = named[0]!;
  return {
    kind: 'env-reference',
    relationship: 'connects_to',
    object: entityKey('service', store),
    summary: `reads ${variable} (value not in the repository) -> store service ${store}, the project's one ${cls.engine} the variable names`,
    attributes: {
      variable,
      source: 'environment',
      store_engine: cls.engine,
      resolution: 'variable-engine',
    },
  };
}
