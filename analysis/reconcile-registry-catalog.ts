/**
 * A proxy rendered for every service of a registry's catalog routes to each service registering in
 * that registry (issue 23, session 15; docs/decisions.md). The proxy's record
 * (`registry-catalog-route`: analysis/cloud/consul-template.ts for Consul Template,
 * analysis/code/eureka-registration.ts for a Zuul proxy over Eureka) names the registry host it
 * asks; each `registry-register` record with the same `registry` and `registry_host`
 * (analysis/code/consul-registration.ts, analysis/code/eureka-registration.ts) is a service of
 * that catalog, unless the route's `ignored_services` patterns (Zuul) match its service id. The route
 * record is copied once per registered service, as a `connects_to` that service, cited at the
 * template's range. A host of `localhost`/`127.0.0.1` is each container's own agent and matches
 * nothing; a service's registration of itself is no route. Registrations are taken once per
 * (registry, host) and routes once per (proxy, registry, host), so the output is bounded by the
 * edges it draws; past MAX_ROUTES copies the rest are dropped.
 */
import type { StoredEvidence } from './reconcile-model';

/**
 * Spring's `PatternMatchUtils.simpleMatch` (Zuul's `zuul.ignored-services`): `*` any run of
 * characters, everything else literal; linear in the name for each `*`-free segment.
 */
export function simpleMatch(pattern: string, name: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === name;
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!name.startsWith(first) || name.length < first.length + last.length) return false;
  let at = first.length;
  for (const mid of parts.slice(1, -1)) {
    const i = name.indexOf(mid, at);
    if (i < 0) return false;
    at = i + mid.length;
  }
  return name.length - last.length >= at && name.endsWith(last);
}

/** A registration the route's `ignored_services` patterns exclude (by its service id). */
function ignored(route: StoredEvidence, reg: StoredEvidence): boolean {
  const patterns = route.attributes.ignored_services;
  if (!Array.isArray(patterns)) return false;
  const id = typeof reg.attributes.service_id === 'string' ? reg.attributes.service_id : null;
  const unitName = reg.subject_key.replace(/^[a-z]+:/, '');
  return patterns.some(
    (p) =>
      typeof p === 'string' && (simpleMatch(p, unitName) || (id !== null && simpleMatch(p, id))),
  );
}

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
      if (unit === e.subject_key || copies >= MAX_ROUTES || ignored(e, reg)) continue;
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
