/**
 * A client's whole connection setting under an engine's key: `Redis:Configuration` (the
 * StackExchange.Redis configuration string, `redis:6379,password=...,ssl=false`), an engine's
 * `ConnectionString` / `Connection` (`"Redis": { "ConnectionString": "cache" }`). Its hosts are
 * the comma-separated items that are `host[:port]`; `key=value` options are skipped.
 */
import type { HostPort } from '../shared/urls';
import { parseHostPort } from '../shared/urls';
import { isHostLike } from './connection-hosts';

/** An engine's configuration / connection key, upper-cased with `_` separators. */
export const CLIENT_CONFIGURATION = /(^|_)(CONFIGURATION|CONNECTION|CONNECTIONSTRING|CONN_?STR)$/;

/** The hosts of a client configuration string; none when an item is not plainly a host. */
export function configurationHosts(value: string): HostPort[] {
  const items = value
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '' && !x.includes('='));
  if (items.length === 0 || !items.every((x) => isHostLike(x) && /[a-z]/i.test(x))) return [];
  return items.map((x) => parseHostPort(x)).filter((h): h is HostPort => h !== null);
}
