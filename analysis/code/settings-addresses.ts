/**
 * Addresses a program's settings file gives with no scheme and no engine (docs/decisions.md, "A
 * settings address with no scheme names a deployed service", issue 23):
 *
 * - a `host:port` value (`"Orders": "orders-api:8080"`): clients that build their base address
 *   as `http://{value}/` (a .NET `HttpClient`/Refit base address read from a section of
 *   `appsettings*.json`) take such strings;
 * - a settings object whose `Host` / `Hostname` / `Server` key holds a bare name beside a `Port`
 *   key (`"Email": { "Host": "relay", "Port": 25 }`): an SMTP, LDAP or similar client's address.
 *
 * Neither names a kind of server, so the host counts only where it is the name of a deployed
 * unit: each becomes a `settings-address` record (no relationship) that reconcile resolves
 * against the deployment (analysis/reconcile-settings-addresses.ts). Not read: loopback hosts,
 * the unit's own names, values under a redirect / callback / CORS / issuer key (address-roles.ts),
 * a listening or binding key (the unit's own socket), list items, and files of a developer's
 * environment (`appsettings.Development.json`, `application-local.yml`), which a deployment does
 * not select.
 */
import { isLocalHost, internalName } from '../shared/urls';
import { basename } from '../shared/paths';
import { addressRole } from './address-roles';
import { push, type Ctx } from './connection-scan';
import { engineFromKey } from './connection-hosts';
import type { JsonKeys } from './json-keys';

/** A `host:port` value: a DNS name starting with a letter, then a numeric port. */
const HOST_PORT_VALUE = /^([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):(\d{1,5})$/i;
/** A bare host name (no port). */
const BARE_HOST = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*$/i;
/** A settings object's host key. */
const HOST_KEY = /^(host|hostname|host_name|server|servername|server_name)$/i;
/** A settings object's port key. */
const PORT_KEY = /^port$/i;
/** Keys of the unit's own socket: where it listens, what it binds (.NET's `urls`, `Kestrel`). */
const OWN_SOCKET = /listen|bind|kestrel|(^|[._:-])urls$/i;
/** Environment names of a developer's run: files of them are not a deployment's settings. */
const DEVELOPER_ENV = /^(development|dev|local|test|testing|debug|localhost)$/i;

/** Per settings file: the host and port keys seen under each parent object. */
export type SettingsHostPairs = Map<
  string,
  { host?: { line: number; value: string; key: string }; port?: number }
>;

/**
 * Whether a settings file is one a deployment selects: not one named for a developer's
 * environment (`appsettings.Development.json`, `application-local.yml`, `config.test.json`).
 */
export function isDeployedSettingsFile(path: string): boolean {
  const parts = basename(path).split(/[.-]/);
  // The name's middle parts (`appsettings.<Env>.json`): not its stem or its extension.
  return !parts.slice(1, -1).some((p) => DEVELOPER_ENV.test(p));
}

const lastSegment = (key: string) => key.split(/[.:]/).pop() ?? '';
const parentOf = (key: string) => key.split(/[.:]/).slice(0, -1).join('.');

/** The host a value names, when it is neither loopback nor the unit itself. */
function namedHost(ctx: Ctx, host: string): string | null {
  const lower = host.toLowerCase();
  if (isLocalHost(lower)) return null;
  const internal = internalName(lower) ?? lower;
  if (ctx.unit.aliases.includes(internal) || ctx.unit.name.toLowerCase() === internal) return null;
  return internal;
}

function emit(ctx: Ctx, line: number, key: string, host: string, port: number | null, by: string) {
  push(ctx, line, `saddr\u0000${host}`, () => ({
    kind: 'settings-address',
    summary: `${ctx.unit.name}'s settings give ${host}${port === null ? '' : `:${port}`} as an address (${key})`,
    attributes: { host, port, setting: key, detected_by: by, in_test: ctx.inTest },
  }));
}

/** Whether a key may hold an address the unit calls (no role that makes it someone else's). */
function callableKey(key: string): boolean {
  return addressRole(key, false) === null && !OWN_SOCKET.test(key);
}

/**
 * Reads one settings line that names no engine (`key`: its full dotted key, `value`: unquoted):
 * a `host:port` value is recorded at once; a host key and a port key are collected under their
 * parent in `pairs` for settingsHostPairs.
 */
export function scanSettingsAddress(
  ctx: Ctx,
  line: number,
  key: string,
  value: string,
  pairs: SettingsHostPairs,
): void {
  if (!callableKey(key)) return;
  const hp = HOST_PORT_VALUE.exec(value);
  if (hp) {
    const host = namedHost(ctx, hp[1] ?? '');
    const port = Number(hp[2]);
    if (host !== null && port > 0 && port < 65536)
      emit(ctx, line, key, host, port, 'host-port-value');
    return;
  }
  const own = lastSegment(key);
  const parent = parentOf(key);
  if (HOST_KEY.test(own) && BARE_HOST.test(value)) {
    const entry = pairs.get(parent) ?? {};
    entry.host = { line, value, key };
    pairs.set(parent, entry);
  } else if (PORT_KEY.test(own) && /^\d{1,5}$/.test(value)) {
    const entry = pairs.get(parent) ?? {};
    entry.port = Number(value);
    pairs.set(parent, entry);
  }
}

/** A JSON string or number value after its key's colon. */
const JSON_VALUE = /:\s*(?:"([^"\\\n]*)"|(\d{1,5})(?![\w.]))/g;

/**
 * Reads every value of a JSON settings file (`code`: comments blanked) that names no engine by
 * its key, however many share a line (`"Mail": { "Host": "relay", "Port": 25 }`), then records
 * the host / port pairs.
 */
export function scanJsonSettingsAddresses(ctx: Ctx, code: string, keys: JsonKeys): void {
  const pairs: SettingsHostPairs = new Map();
  let line = 1;
  let counted = 0;
  for (const m of code.matchAll(JSON_VALUE)) {
    const offset = m.index + m[0].indexOf(m[1] !== undefined ? '"' : (m[2] ?? ''), 1);
    const key = keys.at(offset);
    if (key === null || engineFromKey(key)) continue;
    for (; counted < m.index; counted++) if (code.charCodeAt(counted) === 10) line++;
    scanSettingsAddress(ctx, line, key, m[1] ?? m[2] ?? '', pairs);
  }
  settingsHostPairs(ctx, pairs);
}

/** Records each settings object's host key that has a port key beside it. */
export function settingsHostPairs(ctx: Ctx, pairs: SettingsHostPairs): void {
  for (const { host, port } of pairs.values()) {
    if (!host || port === undefined || port <= 0 || port >= 65536) continue;
    const name = namedHost(ctx, host.value);
    if (name !== null) emit(ctx, host.line, host.key, name, port, 'host-port-pair');
  }
}
