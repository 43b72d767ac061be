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
import { classifyImage } from './common';
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
 * Services of a compose project whose image (interpolated) is a well-known datastore or broker.
 * When the folder holds Compose's default files, only those count: a service declared only in
 * an alternative file (`docker-compose.prod.yml`, `docker-compose-tests.yml`, read with `-f`)
 * answers its name only in that variant.
 */
export function storeServiceNames(files: ComposeFile[], vars: Map<string, string>): Set<string> {
  const out = new Set<string>();
  const defaults = files.filter((cf) => DEFAULT_FILE.test(baseName(cf.file.path)));
  for (const cf of defaults.length > 0 ? defaults : files) {
    for (const [name, svc] of Object.entries(cf.services)) {
      if (!isRecord(svc)) continue;
      const raw = asString(svc.image);
      if (!raw) continue;
      const image = interpolate(raw, vars);
      if (!image || image.includes('$')) continue;
      const cls = classifyImage(parseImageRef(image));
      if (cls && (cls.kind === 'datastore' || cls.kind === 'queue')) out.add(name);
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
  stores: Set<string>,
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
