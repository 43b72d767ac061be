/**
 * A proxy rendered for every service of a Consul catalog routes to each service registering in
 * that Consul (issue 23, session 15; docs/decisions.md). The proxy's record
 * (`registry-catalog-route`, analysis/cloud/consul-template.ts) names the Consul host its
 * `consul-template` asks; each `registry-register` record with the same `registry` and
 * `registry_host` (analysis/code/consul-registration.ts) is a service of that catalog. The route
 * record is copied once per registered service, as a `connects_to` that service, cited at the
 * template's range. A host of `localhost`/`127.0.0.1` is each container's own agent and matches
 * nothing; a service's registration of itself is no route. Registrations are taken once per
 * (registry, host) and routes once per (proxy, registry, host), so the output is bounded by the
 * edges it draws; past MAX_ROUTES copies the rest are dropped.
 */
import type { StoredEvidence } from './reconcile-model';

const LOOPBACK = /^(localhost|127\.0\.0\.1|::1|0\.0\.0\.0)$/;
const MAX_ROUTES = 10_000;

/** The records with each catalog route copied to the services registering in its Consul. */
export function assignRegistryCatalogRoutes(evidence: StoredEvidence[]): StoredEvidence[] {
  if (!evidence.some((e) => e.evidence_kind === 'registry-catalog-route')) return evidence;
  const registered = new Map<string, Map<string, StoredEvidence>>();
  for (const e of evidence) {
    const a = e.attributes;
    if (e.evidence_kind !== 'registry-register' || e.attributes.in_test === true) continue;
    if (typeof a.registry !== 'string' || typeof a.registry_host !== 'string') continue;
    if (LOOPBACK.test(a.registry_host)) continue;
    const k = `${a.registry}\u0000${a.registry_host}`;
    const byUnit = registered.get(k) ?? new Map<string, StoredEvidence>();
    if (!byUnit.has(e.subject_key)) byUnit.set(e.subject_key, e);
    registered.set(k, byUnit);
  }
  const out: StoredEvidence[] = [];
  const done = new Set<string>();
  let copies = 0;
  for (const e of evidence) {
    if (e.evidence_kind !== 'registry-catalog-route') {
      out.push(e);
      continue;
    }
    const a = e.attributes;
    const k = `${String(a.registry)}\u0000${String(a.registry_host)}`;
    const regs = registered.get(k);
    const once = `${e.subject_key}\u0000${k}`;
    if (!regs || done.has(once)) {
      out.push(e);
      continue;
    }
    done.add(once);
    let i = 0;
    for (const [unit, reg] of [...regs].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      if (unit === e.subject_key || copies >= MAX_ROUTES) continue;
      copies++;
      out.push({
        ...e,
        id: i === 0 ? e.id : `${e.id}:${i}`,
        relationship_kind: 'connects_to',
        object_key: unit,
        summary: `${e.summary}: ${unit} registers there`,
        attributes: { ...a, registered_by: reg.id },
      });
      i++;
    }
    if (i === 0) out.push(e);
  }
  return out;
}
