/**
 * Local addresses and listening ports of a JVM unit's settings (`application*.yml`,
 * `bootstrap*.properties`), for the host-network resolution of reconcile
 * (analysis/reconcile-host-network.ts):
 *
 * - `local-address`: a setting naming the local host with a port and no engine of its own
 *   (`consul.client.defaultZone: localhost:8500`, `zipkin.url: http://localhost:9411`, or a
 *   `host: localhost` (or `hostname: 127.0.0.1`) / `port: 5488` pair under one parent). Inside a container on the host
 *   network, or on a developer's machine, that is whatever listens on the host at that port.
 * - `listen-port`: the port the unit's own server listens on (`server.port`,
 *   `micronaut.server.port`, `quarkus.http.port`), placeholders read as their defaults.
 *
 * Neither is a relationship by itself; reconcile draws an edge only when exactly one unit of
 * the deployment listens at the port.
 */
import { isLocalHost, parseHostPort } from '../shared/urls';
import { push, type Ctx } from './connection-scan';

/** Keys of the unit's own server port. */
const LISTEN_KEY = /^(?:[\w-]+\.)?(?:server\.port|http\.port)$/i;
/** Keys of the unit's own server address (never an address it calls). */
const OWN_SERVER = /^(?:[\w-]+\.)?(server|http)$/i;

/** Per settings file: `host` / `port` keys seen under each parent, to pair them. */
export type HostPortPairs = Map<string, { host?: { line: number }; port?: number; done?: boolean }>;

function localAddress(ctx: Ctx, line: number, key: string, port: number, value: string): void {
  push(ctx, line, `local\u0000${port}`, () => ({
    kind: 'local-address',
    summary: `${ctx.unit.name} is configured to reach the local host at port ${port} (${key})`,
    attributes: { key, value, host: 'localhost', port, in_test: ctx.inTest },
  }));
}

const validPort = (p: number) => Number.isInteger(p) && p > 0 && p < 65536;

/** Reads one settings line (its dotted key and its value with placeholder defaults). */
export function scanLocalSetting(
  ctx: Ctx,
  line: number,
  key: string,
  value: string,
  pairs: HostPortPairs,
): void {
  const v = value.trim().replace(/^(['"])(.*)\1$/, '$2');
  if (LISTEN_KEY.test(key) && /^\d{2,5}$/.test(v)) {
    const port = Number(v);
    if (validPort(port))
      push(ctx, line, `listen\u0000${port}`, () => ({
        kind: 'listen-port',
        summary: `${ctx.unit.name} listens on port ${port} (${key})`,
        attributes: { key, port, in_test: ctx.inTest },
      }));
    return;
  }
  const dot = key.lastIndexOf('.');
  const parent = dot < 0 ? '' : key.slice(0, dot);
  const leaf = key.slice(dot + 1).toLowerCase();
  if (OWN_SERVER.test(parent) || parent === '') return;
  // `host: localhost` (or `hostname:`) and `port: 5488` under one parent.
  if (leaf === 'host' || leaf === 'hostname' || leaf === 'port') {
    const pair = pairs.get(parent) ?? {};
    pairs.set(parent, pair);
    if (leaf !== 'port' && isLocalHost(v)) pair.host = { line };
    if (leaf === 'port' && /^\d{2,5}$/.test(v)) pair.port = Number(v);
    if (pair.host && pair.port !== undefined && !pair.done && validPort(pair.port)) {
      pair.done = true;
      localAddress(ctx, pair.host.line, parent, pair.port, `localhost:${pair.port}`);
    }
    return;
  }
  // `localhost:8500`, `http://127.0.0.1:9411/...`.
  const url = /^(?:https?|wss?):\/\/([^/\s?#]+)(?:[/?#].*)?$/i.exec(v);
  const hp = parseHostPort(url ? (url[1] ?? '') : v);
  if (!hp || hp.port === null || !isLocalHost(hp.host) || !validPort(hp.port)) return;
  if (!url && !/^[\w.-]+:\d{2,5}$/.test(v)) return;
  localAddress(ctx, line, key, hp.port, v);
}
