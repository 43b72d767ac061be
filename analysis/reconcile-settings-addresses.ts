/**
 * Scheme-less settings addresses (docs/decisions.md, "A settings address with no scheme names a
 * deployed service", issue 23). A program's settings file may give an address with no scheme and
 * no engine key: a `host:port` value (`"Orders": "orders-api:8080"`, which the code turns into
 * `http://{value}/`) or a settings object's `Host` beside a `Port` (`"Email": { "Host": "relay",
 * "Port": 25 }`). Such a value names no kind of server, so it counts only when the host is the
 * name of exactly one unit a deployment runs (a compose service, a workload): the unit whose
 * settings hold it connects to that one. A name nothing deployed carries (a sample host, a
 * public relay) draws nothing; the records are read in analysis/code/settings-addresses.ts.
 * A line whose key code reads (`config-key-read`, analysis/code/config-keys.ts) is left to those
 * reads: they say which program connects (one of several a unit holds, reconcile-programs.ts).
 */
import { keyKind } from './evidence';
import { deployedUnits } from './reconcile-local-run';
import { addInferredConnection, type RelEntry, type StoredEvidence } from './reconcile-model';

const TARGET_KINDS = new Set(['service', 'datastore', 'queue']);

/**
 * The `connects_to` entries from units to the deployed unit their settings' scheme-less address
 * names. `hostEntity`: the one placed entity a host name names, or null.
 */
export function settingsAddressEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, RelEntry>,
  rep: (key: string) => string,
  placed: (key: string) => boolean,
  hostEntity: (host: string) => string | null,
): Map<string, RelEntry> {
  const out = new Map<string, RelEntry>();
  const records = evidence.filter(
    (e) => e.evidence_kind === 'settings-address' && e.attributes.in_test !== true,
  );
  if (records.length === 0) return out;
  const deployed = deployedUnits(evidence, rep);
  const read = readLines(evidence);
  for (const e of records) {
    if (read.has(`${e.location.path}:${e.location.start_line}`)) continue;
    if (!placed(e.subject_key) || keyKind(e.subject_key) !== 'service') continue;
    const source = rep(e.subject_key);
    const target = hostEntity(String(e.attributes.host));
    if (!target || target === source || !deployed.has(target)) continue;
    if (!TARGET_KINDS.has(keyKind(target))) continue;
    addInferredConnection(out, relEvidence, source, target, undefined, [e]);
  }
  return out;
}

/** `path:line` of each settings line whose key code reads (and of its copies). */
function readLines(evidence: StoredEvidence[]): Set<string> {
  const out = new Set<string>();
  for (const e of evidence) {
    if (e.evidence_kind !== 'config-key-read') continue;
    out.add(`${String(e.attributes.config_path)}:${String(e.attributes.config_line)}`);
    const copies = e.attributes.config_copies;
    for (const c of Array.isArray(copies) ? copies : []) out.add(String(c));
  }
  return out;
}
