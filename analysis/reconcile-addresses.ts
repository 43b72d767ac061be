/** Addresses a service is handed: received but never read, or handed for a role (not a call). */
import {
  addressRole,
  isIdentityProviderImage,
  isIdentityProviderPackage,
} from './code/address-roles';
import { isConnectionEnvName } from './code/connection-hosts';
import type { StoredEvidence } from './reconcile-model';
import { builtUnits, programReads } from './reconcile-program-reads';

/**
 * Variables a framework or client library reads by name, without a read in code: Spring relaxed
 * binding, .NET `A__B`, the Google Cloud clients' `FIRESTORE_EMULATOR_HOST` (`PUBSUB_...`).
 */
const FRAMEWORK_BOUND = /^(SPRING|QUARKUS|MICRONAUT|ASPNETCORE|DOTNET)_|__|^[A-Z]+_EMULATOR_HOST$/;

/**
 * Configuration indirection (docs/decisions.md): a connection whose only evidence is configuration
 * handing the service address variables its code never reads (only address variables, the ones
 * whose reads the code analyzer reports, can be known unread; framework-bound names count as
 * read). Received in bulk (`envFrom`, `env_file`: a whole map every consumer gets), such an edge
 * is `dropped` when the service's code is in the repository. Set for this service (an `env`
 * entry, a key reference, a Dockerfile ENV), it is kept as `received` (lower strength) when the
 * code visibly reads other address variables; code with no recognized read at all may read in
 * ways we do not see, so that edge keeps its strength. No code (an image only): unchanged.
 */
export function receivedOnlyEdges(
  evidence: StoredEvidence[],
  relEvidence: Map<string, { kind: string; source: string; target: string; ev: StoredEvidence[] }>,
  rep: (key: string) => string,
): Map<string, 'received' | 'dropped'> {
  const { coded, reads } = programReads(evidence, rep);
  // Start order: `A depends_on B` (compose) makes B start before A; B is A's dependency.
  const dependents = new Set<string>();
  for (const e of evidence)
    if (e.evidence_kind === 'depends-on' && e.object_key)
      dependents.add(`${rep(e.object_key)}\u0000${rep(e.subject_key)}`);
  const out = new Map<string, 'received' | 'dropped'>();
  for (const [key, rel] of relEvidence) {
    if (rel.kind !== 'connects_to') continue;
    const configOnly = rel.ev.every(
      (e) => e.source_type !== 'code' && typeof e.attributes.variable === 'string',
    );
    if (!configOnly) continue;
    const bulk = rel.ev.every((e) => e.attributes.received === 'bulk');
    // A shared file handed to a dependency that addresses its own dependents (an emulator
    // given the project's `.env`): the dependents call it, not the reverse.
    if (bulk && dependents.has(`${rel.source}\u0000${rel.target}`)) {
      out.set(key, 'dropped');
      continue;
    }
    if (!coded.has(rel.source)) continue;
    const read = reads.get(rel.source);
    const silent = (v: string) =>
      isConnectionEnvName(v) && !read?.has(v) && !FRAMEWORK_BOUND.test(v);
    if (!rel.ev.every((e) => silent(String(e.attributes.variable)))) continue;
    if (bulk) out.set(key, 'dropped');
    else if (read) out.set(key, 'received');
  }
  return out;
}

/**
 * The role of an address (analysis/code/address-roles.ts): a record that hands its subject an
 * address to recognise or send browsers to (a redirect, a callback, an allow-list, an issuer, a
 * client registered with an identity provider) makes no edge from that subject. The code
 * analyzer marks such URLs `address_role`; variables (compose, Kubernetes, Aspire
 * `WithEnvironment`) are judged by their name here, where the receiver's whole evidence says
 * whether it is an identity provider.
 */
export function handedAddresses(
  evidence: StoredEvidence[],
  rep: (key: string) => string,
): (e: StoredEvidence) => boolean {
  const idps = new Set<string>();
  for (const e of evidence) {
    const pkg = e.evidence_kind === 'dependency-declared' ? e.attributes.package : null;
    const img = e.attributes.image;
    // Compose records the image parsed (`{ raw, repo, ... }`), Aspire and Kubernetes as written.
    const image =
      typeof img === 'string'
        ? img
        : img && typeof img === 'object'
          ? (img as Record<string, unknown>).repo
          : null;
    if (
      (typeof pkg === 'string' && isIdentityProviderPackage(pkg)) ||
      (typeof image === 'string' && isIdentityProviderImage(image))
    )
      idps.add(rep(e.subject_key));
  }
  const roleReads = codeReadRoles(evidence, rep);
  return (e) => {
    if (typeof e.attributes.address_role === 'string') return true;
    const v = e.attributes.variable;
    if (typeof v !== 'string') return false;
    if (e.source_type !== 'code' && roleReads.has(`${rep(e.subject_key)}\u0000${v}`)) return true;
    return addressRole(v, idps.has(rep(e.subject_key))) !== null;
  };
}

/**
 * Variables whose every read by an entity's code has an address role (analysis/code/php-env-roles.ts:
 * the value only joins a list of host names the code tests membership in): configuration handing
 * that entity such a variable hands it an address to recognise, not one to call. One read
 * without a role (a URL built from it, a use not read) outside tests keeps every record of it a
 * call. A service building a unit it is kept apart from (reconcile-program-reads.ts `builtUnits`)
 * runs that unit's code: the unit's reads are its reads.
 */
function codeReadRoles(evidence: StoredEvidence[], rep: (key: string) => string): Set<string> {
  const runners = new Map<string, string[]>();
  for (const [service, unit] of builtUnits(evidence, rep))
    runners.set(unit, [...(runners.get(unit) ?? []), service]);
  const roles = new Map<string, boolean>();
  for (const e of evidence) {
    if (e.source_type !== 'code' || e.evidence_kind !== 'env-read') continue;
    if (typeof e.attributes.variable !== 'string' || e.attributes.source === 'env-file') continue;
    // A test's reads are not the deployed code's.
    if (e.attributes.in_test === true) continue;
    const role = typeof e.attributes.address_role === 'string';
    const subject = rep(e.subject_key);
    for (const who of [subject, ...(runners.get(subject) ?? [])]) {
      const slot = `${who}\u0000${e.attributes.variable}`;
      roles.set(slot, (roles.get(slot) ?? true) && role);
    }
  }
  return new Set([...roles].filter(([, role]) => role).map(([slot]) => slot));
}

/** The first host of a default value: `db`, `cache:6379`, `redis://cache:6379/0` -> the host. */
export function defaultHost(value: string): string | null {
  const first = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(',')[0] ?? '';
  const host = first.split(/[:/]/)[0] ?? '';
  return /^[a-z0-9][a-z0-9_.-]*$/i.test(host) && /[a-z]/i.test(host) ? host.toLowerCase() : null;
}
