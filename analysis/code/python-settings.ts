/**
 * Python settings modules (Django's `settings.py`, `sentry.conf.py`, any module of literal
 * dicts): a datastore's host written as a dict entry, not as a URL. `DATABASES = {"default":
 * {"ENGINE": "django.db.backends.postgresql", "HOST": "db"}}`, `CACHES = {"default": {"BACKEND":
 * "...memcache...", "LOCATION": ["memcached:11211"]}}`, `OPTIONS["redis.clusters"] = {...
 * {"host": "redis", "port": 6379}}`. The engine is the one the statement names: the nearest
 * `ENGINE` / `BACKEND` value before the entry, else the assigned name or key (`redis.clusters`).
 * Only literal values count: a host read from the environment is an env read, reported elsewhere.
 */
import type { LineIndex } from '../shared/text';
import { parseHostPort, type HostPort } from '../shared/urls';
import { emitHostConnection, type Ctx } from './connection-scan';
import { engineFromKey, hostList } from './connection-hosts';

/** A dict entry naming where a store is: `"HOST": "db"`, `'LOCATION': ['cache:11211']`. */
const ENTRY =
  /(["'])(host|hostname|hosts|location|address|server|servers)\1\s*:\s*(\[\s*)?(["'])([^"'\n]{1,200})\4/gi;
/** A value naming the engine inside the statement: the class or module of the backend. */
const ENGINE_VALUE = /(["'])(engine|backend|class|client_class)\1\s*:\s*(["'])([^"'\n]{1,200})\3/gi;

/** Connections of the literal dict entries of one Python file (comments already blanked). */
export function scanPythonSettings(ctx: Ctx, code: string, idx: LineIndex): void {
  ENTRY.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ENTRY.exec(code)) !== null) {
    const start = statementStart(code, m.index);
    const before = code.slice(start, m.index);
    const engine = engineOf(before);
    if (!engine) continue;
    const value = m[5] ?? '';
    let hosts: HostPort[] = hostList(value);
    if (hosts.length === 0 && /^[a-z][\w.-]*$/i.test(value)) {
      const hp = parseHostPort(value);
      if (hp) hosts = [hp];
    }
    const line = idx.lineAt(m.index + m[0].length - 1);
    for (const hp of hosts) emitHostConnection(ctx, line, engine, hp, 'settings-dict');
  }
}

/** Offset of the top-level statement holding `at`: the last line before it starting in column 0. */
function statementStart(code: string, at: number): number {
  let i = code.lastIndexOf('\n', at - 1);
  while (i > 0) {
    const c = code[i + 1];
    if (c !== undefined && c !== ' ' && c !== '\t' && c !== '\n' && c !== '}' && c !== ']')
      return i + 1;
    i = code.lastIndexOf('\n', i - 1);
  }
  return 0;
}

/** The engine the statement names before the entry: its last backend value, else its target. */
function engineOf(before: string): ReturnType<typeof engineFromKey> {
  let found: ReturnType<typeof engineFromKey> = null;
  ENGINE_VALUE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ENGINE_VALUE.exec(before)) !== null) found = engineFromKey(m[4] ?? '') ?? found;
  if (found) return found;
  const target = /^([^=\n]*?)=(?!=)/.exec(before)?.[1] ?? '';
  return engineFromKey(target);
}
