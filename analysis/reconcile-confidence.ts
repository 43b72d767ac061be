/** How strongly evidence supports an entity or edge, and where its records disagree. */
import type { ConflictingClaim, StoredEvidence } from './reconcile-model';

/**
 * How strongly one record supports what it states (docs/decisions.md, "Edge confidence"):
 * - 0.75: the unit's own code or settings establish the connection: a datastore/broker URL or
 *   DSN, a client built with a literal host, a literal URL passed to an HTTP client, a service
 *   called by its registry id (Feign, Dapr, discovery, a name registered in a service
 *   registry), an embedded store it opens, an Aspire client integration, a config client;
 * - 0.6: a declaration (a compose service, a workload, a unit), an AppHost reference, and code
 *   reading an address variable (its default, or the value configuration sets), an address
 *   key of its configuration file, or a Dapr secret whose value is an address;
 * - 0.55: a service-internal http(s) URL written in the unit's code or settings outside a call,
 *   or a scheme-less settings address naming a deployed unit (`settings-address`);
 * - 0.5: a reference in deployment configuration (an env value naming a host, a route, a
 *   dependency), a Dapr scope (allowed to use), a registry inferred from the one server;
 * - 0.4: anything else, such as an external URL written outside a call, an address only a
 *   configuration template's default gives (`template_default`, analysis/cloud/proxies.ts: the
 *   deployment may set the variable otherwise), a compose reference read from a variable's name
 *   alone (`resolution: variable-engine`, `depended-port-variable`), or a proxy route whose
 *   proxy is only the service running an image named like the Dockerfile that copies the file
 *   (`owner_link: 'image-name'`, analysis/cloud/proxies.ts) or mounts the file at a path only the
 *   project's committed `.env` template gives (`owner_link: 'env-template'`);
 * - 0.35: a record of a non-primary deployment variant (`variant_primary: false`), a value only
 *   a committed template documents for an absent environment file (`documented_by`), an
 *   address a one-shot container wrote into a volume its readers mount (`written_by`).
 * An address the service only receives and never reads counts RECEIVED_ONLY_STRENGTH (0.3).
 */
const CODE_ESTABLISHED = new Set([
  'external-api-call',
  'service-id-reference',
  'embedded-store',
  'embedded-broker',
  'config-client',
  'registry-lookup',
]);
const VARIANT_STRENGTH = 0.35;
/**
 * Compose environment references read from a variable's name with no address in it: the
 * project's one store of the engine an address variable names (`ELASTICSEARCH_HOST`, no value),
 * and the port variable of a service the container depends on (analysis/cloud/compose.ts).
 */
const WEAK_RESOLUTIONS = new Set(['variable-engine', 'depended-port-variable']);
const WRITTEN_STRENGTH = 0.35;

function strength(e: StoredEvidence): number {
  const kind = e.evidence_kind;
  // A record of a deployment variant that is not the primary one (the variant reader marks it).
  if (e.attributes.variant_primary === false) return VARIANT_STRENGTH;
  // `.env.example` standing in for the absent `.env`: the user's own file may say otherwise.
  if (documented(e)) return VARIANT_STRENGTH;
  // An address a one-shot container wrote into a shared volume (reconcile-mounted.ts).
  if (typeof e.attributes.written_by === 'string') return WRITTEN_STRENGTH;
  if (e.source_type === 'code') {
    if (CODE_ESTABLISHED.has(kind)) return 0.75;
    if (kind === 'resource-reference' && e.attributes.apphost === undefined) return 0.75;
    if (kind === 'connection-string') {
      if (e.attributes.category === 'datastore' || e.attributes.category === 'queue') return 0.75;
      if (e.attributes.detected_by === 'http-call') return 0.75;
      if (e.attributes.internal_host === true) return 0.55;
      return 0.4;
    }
    if (kind === 'env-read' || kind === 'config-key-read' || kind === 'dapr-secret-read')
      return 0.6;
    if (kind === 'settings-address') return 0.55;
  }
  if (/-declared$/.test(kind) || kind === 'unit-declared') return 0.6;
  if (Array.isArray(e.attributes.template_default)) return 0.4;
  // A deployment value inferred from a name alone: an engine's one store, a waited-for port.
  if (WEAK_RESOLUTIONS.has(String(e.attributes.resolution))) return 0.4;
  if (
    kind === 'proxy-route' &&
    (e.attributes.owner_link === 'image-name' || e.attributes.owner_link === 'env-template')
  )
    return 0.4;
  if (kind === 'resource-reference') return 0.6;
  if (/reference|depends-on|route|import|exposed|push|deploys|uses|scope|registry/.test(kind))
    return 0.5;
  return 0.4;
}

const documented = (e: StoredEvidence) => typeof e.attributes.documented_by === 'string';

/**
 * Whether an edge's value is known only from a committed template (`.env.example`): the code's
 * reads of the variable corroborate that it is used, not what it is set to.
 */
function templateOnly(evidence: StoredEvidence[]): boolean {
  return (
    evidence.some(documented) &&
    evidence.every((e) =>
      e.source_type === 'code' ? e.evidence_kind === 'env-read' : documented(e),
    )
  );
}

/** Strength of an address a service receives but its code, present, never reads. */
const RECEIVED_ONLY_STRENGTH = 0.3;

/**
 * Deterministic confidence: documented in docs/decisions.md. `receivedOnly`: the evidence is an
 * address the service only receives (configuration indirection), so it counts at
 * RECEIVED_ONLY_STRENGTH whatever its kinds. Independent corroboration raises it: +0.15 per
 * further source type (code, cloud, cicd), +0.05 per further record (at most +0.15); each
 * contradiction lowers it by 0.2.
 */
export function confidence(
  evidence: StoredEvidence[],
  contradictions: number,
  receivedOnly = false,
): string {
  const sources = new Set(evidence.map((e) => e.source_type)).size;
  const base = receivedOnly
    ? RECEIVED_ONLY_STRENGTH
    : templateOnly(evidence)
      ? VARIANT_STRENGTH
      : evidence.reduce((m, e) => Math.max(m, strength(e)), -Infinity);
  const extra = Math.min(0.15, 0.05 * (evidence.length - 1));
  const value = base + 0.15 * (sources - 1) + extra - 0.2 * contradictions;
  return Math.min(0.99, Math.max(0.05, value)).toFixed(2);
}

const CONTRADICTION_FIELDS = [
  'image_tag',
  'container_port',
  'replicas',
  'engine',
  'engine_version',
] as const;

export function contradictionsOf(evidence: StoredEvidence[]): ConflictingClaim[] {
  const out: ConflictingClaim[] = [];
  for (const field of CONTRADICTION_FIELDS) {
    const byValue = new Map<string, { value: unknown; ids: string[]; sources: Set<string> }>();
    for (const e of evidence) {
      const value = e.attributes[field];
      if (value === undefined || value === null || value === '') continue;
      const k = JSON.stringify(value);
      const entry = byValue.get(k) ?? { value, ids: [], sources: new Set<string>() };
      entry.ids.push(e.id);
      entry.sources.add(e.provider);
      byValue.set(k, entry);
    }
    if (byValue.size > 1) {
      out.push({
        field,
        claims: [...byValue.values()]
          .map((c) => ({
            value: c.value,
            evidence_ids: c.ids.sort(),
            sources: [...c.sources].sort(),
          }))
          .sort((a, b) => JSON.stringify(a.value).localeCompare(JSON.stringify(b.value))),
      });
    }
  }
  return out;
}

export function mergeAttributes(
  evidence: StoredEvidence[],
  aliases: string[],
): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  const providers = new Set<string>();
  for (const e of evidence) {
    providers.add(e.provider);
    for (const [k, v] of Object.entries(e.attributes)) {
      if (k === 'aliases' || v === undefined) continue;
      if (!(k in attributes)) attributes[k] = v;
    }
  }
  attributes.aliases = aliases;
  attributes.providers = [...providers].sort();
  return attributes;
}
