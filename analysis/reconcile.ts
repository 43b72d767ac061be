/**
 * Reconciliation: evidence from code, cloud and CI/CD merged into one graph of entities and
 * relationships with canonical keys. Deterministic: the same evidence always gives the same
 * graph. Identity resolution merges the names one thing has in different files (a compose
 * service, a Kubernetes Deployment and its Service, a source directory, an image name).
 */
import type { SourceType } from './evidence';
import { entityKey, keyKind, keyName, normalizeName } from './evidence';
import { handedAddresses, receivedOnlyEdges, defaultHost } from './reconcile-addresses';
import { confidence, contradictionsOf, mergeAttributes } from './reconcile-confidence';
import { daprSecretConnections, engineFamily } from './reconcile-dapr-secrets';
import { builtDir, identitySets, RULE_TEXT, UnionFind } from './reconcile-identity';
import { unitByImageTag } from './reconcile-image-tags';
import { dotnetEntryUnits } from './reconcile-dotnet-entry';
import { ciBuiltDirs } from './cloud/built-images';
import { assignPrograms } from './reconcile-programs';
import { assignRunCode } from './reconcile-run-code';
import { mountedSettings } from './reconcile-mounted';
import {
  DEPLOYMENT_KINDS,
  GRAPH,
  type Entity,
  type Graph,
  type IdentityConflict,
  type RelEntry,
  type Relationship,
  type StoredEvidence,
} from './reconcile-model';
import { sdkStoreEdges } from './reconcile-sdk-stores';
import { localStoreEdges } from './reconcile-local-stores';
import { assignRegistryCatalogRoutes } from './reconcile-registry-catalog';
import { retargetEmbeddedBrokers } from './reconcile-embedded-brokers';
import { hostNetworkEdges } from './reconcile-host-network';
import { localRunEdges } from './reconcile-local-run';
import { dependedStoreEdges } from './reconcile-depended-stores';
import { templateEdges } from './reconcile-env-templates';
import { settingsStoreEdges } from './reconcile-settings-stores';
import { settingsAddressEdges } from './reconcile-settings-addresses';
import { dirname, normalizeDir } from './shared/paths';
import { selectVariants } from './variants';
import { unlistedManifests } from './kustomize-unlisted';
import { withoutDevContainers } from './devcontainer-stacks';
import { withoutTestStacks } from './compose-test-stacks';
import { withoutUnusedOverlays } from './compose-overlays';
import { withoutUnselectedServices } from './unselected-services';

export { confidence } from './reconcile-confidence';
export { GRAPH_KINDS, type ConflictingClaim } from './reconcile-model';
export type { Entity, Graph, IdentityConflict, Relationship, StoredEvidence };

/**
 * Builds the graph from stored evidence. Evidence seen only in tests (fixtures, mocks) stays
 * evidence but shapes no entity or relationship: a URL in a test is not an architecture fact.
 */
export function reconcile(allEvidence: StoredEvidence[]): Graph {
  // The graph is built from the primary deployment variant; the others add no edge to it.
  // Code run by one program of a many-program image belongs to the service running it.
  // A dev container's compose file is no deployment when another one exists; a manifest a
  // kustomization leaves out of a folder it enumerates is deployed by nothing, and a Service
  // selecting no Pod of the repository that nothing addresses is no deployable.
  const deployed = withoutUnselectedServices(
    withoutUnusedOverlays(withoutTestStacks(withoutDevContainers(allEvidence))),
  );
  const unlisted = unlistedManifests(deployed);
  const { evidence: primary, variants } = selectVariants(
    assignPrograms(
      assignRunCode(
        unlisted.size === 0
          ? deployed
          : deployed.filter((e) => e.provider !== 'kubernetes' || !unlisted.has(e.location.path)),
      ),
    ),
  );
  // A content order, not the input order, decides ties (which value an attribute keeps).
  // Each record's order key is computed once, not twice per comparison.
  // An address of a service hosting an embedded broker, at the broker's port, is the broker's.
  // A proxy rendered for a whole Consul catalog routes to each service registering there.
  let evidence = retargetEmbeddedBrokers(assignRegistryCatalogRoutes(primary))
    .filter((e) => e.attributes.in_test !== true)
    .map((e) => ({ e, k: orderKey(e) }))
    .sort((a, b) => a.k.localeCompare(b.k))
    .map(({ e }) => e);
  const uf = new UnionFind();
  const subjects = new Set<string>();
  for (const e of evidence) {
    if (GRAPH.has(keyKind(e.subject_key))) subjects.add(e.subject_key);
    if (e.object_key && GRAPH.has(keyKind(e.object_key))) subjects.add(e.object_key);
  }
  const byName = new Map<string, string[]>();
  for (const key of subjects) pushTo(byName, keyName(key), key);
  // Deployables: a compose service, a workload. Two of one provider never merge (docs/decisions.md).
  const declarations = new Map<string, string[]>();
  for (const e of evidence) {
    if (!DEPLOYMENT_KINDS.has(e.evidence_kind) || !GRAPH.has(keyKind(e.subject_key))) continue;
    // Compose files of one directory are one project (a file and its overrides); another
    // directory's compose file is another deployment of the system, like a Kubernetes manifest.
    const group =
      e.provider === 'docker-compose' ? `${e.provider}:${dirname(e.location.path)}` : e.provider;
    uf.declare(e.subject_key, group);
    pushTo(declarations, e.subject_key, e.id);
  }
  // A Dockerfile named for its final stage names its set only when nothing else does.
  for (const e of evidence)
    if (
      e.evidence_kind === 'dockerfile-declared' &&
      typeof e.attributes.final_stage === 'string' &&
      normalizeName(e.attributes.final_stage) === keyName(e.subject_key)
    )
      uf.stage(e.subject_key);
  // So does a name only a service registry lookup gives (`discovery:///acme.user.service`): the
  // program registering it has a name of its own (analysis/code/registry-names.ts).
  const subjectKeys = new Set(evidence.map((e) => e.subject_key));
  for (const e of evidence)
    if (e.evidence_kind === 'registry-lookup' && e.object_key && !subjectKeys.has(e.object_key))
      uf.stage(e.object_key);
  // Last of all a Terraform module call's name, when its template builds the deployed name from the
  // call's inputs (an alias, analysis/cloud/terraform-modules.ts): that name names the set.
  for (const e of evidence)
    if (e.attributes.name_source === 'module-instance' && Array.isArray(e.attributes.aliases))
      uf.moduleCall(e.subject_key);
  const clashes = new Map<
    string,
    { keys: string[]; rule: string; ids: string[]; shared: string }
  >();
  const join = (a: string, b: string, rule: string, cause: StoredEvidence) => {
    const kept = uf.union(a, b);
    if (!kept) return;
    const id = kept.join('\u0000');
    if (clashes.has(id)) return;
    const ids = [cause.id, ...kept.flatMap((k) => declarations.get(k) ?? [])];
    clashes.set(id, { keys: kept, rule, ids: [...new Set(ids)], shared: a });
  };

  // 1. Names declared as aliases of a subject (k8s Service names, directory vs manifest names).
  for (const e of evidence) {
    const aliases = e.attributes.aliases;
    if (!Array.isArray(aliases) || !GRAPH.has(keyKind(e.subject_key))) continue;
    for (const alias of aliases) {
      for (const other of byName.get(normalizeName(String(alias))) ?? []) {
        if (keyKind(other) === keyKind(e.subject_key) || keyKind(other) === 'service')
          join(e.subject_key, other, 'alias', e);
      }
    }
  }
  // 2. A service and a datastore/queue/bucket of the same name are one thing (compose `db` running
  //    postgres). Not a bucket or queue known only by its plain name in a variable
  //    (`UPLOAD_BUCKET: langfuse`): that name is no host, and says nothing of a service's identity.
  const plainNamed = plainNamedResources(evidence);
  for (const keys of byName.values()) {
    const specific = keys.filter(
      (k) => ['datastore', 'queue', 'bucket'].includes(keyKind(k)) && !plainNamed.has(k),
    );
    const services = keys.filter((k) => keyKind(k) === 'service');
    if (specific.length && services.length) for (const s of services) uf.union(specific[0]!, s);
  }
  // 2b. A dotted host that is the name a deployment declares (a compose service `catalog.api`,
  //     its `hostname` or `container_name`) is that deployable, not an Internet host: analyzers
  //     that see no deployment (a gateway's settings, a URL in code) key it `external:`.
  for (const [name, keys] of deployedNames(evidence)) {
    for (const ext of byName.get(name) ?? [])
      if (keyKind(ext) === 'external') for (const k of keys) uf.union(k, ext);
  }
  // 3. Builds and images: a compose/k8s service built from a Dockerfile in a unit's directory
  //    (the build's `dockerfile` inside its context, else the context's Dockerfile), or running
  //    an image named like a code unit, is that unit. A context shared by several services (the
  //    repository root) names no unit when the build says which Dockerfile it uses.
  const unitsByDir = new Map<string, string>();
  for (const e of evidence) {
    const dir = typeof e.attributes.dir === 'string' ? normalizeDir(e.attributes.dir) : null;
    if (e.evidence_kind === 'unit-declared' && dir !== null) unitsByDir.set(dir, e.subject_key);
  }
  // A Dockerfile without a code unit around it (no manifest) is the build identity of its folder.
  // One running `dotnet X.dll` builds the .NET project X (reconcile-dotnet-entry.ts).
  const entryUnits = dotnetEntryUnits(evidence);
  for (const e of evidence) {
    if (e.evidence_kind !== 'dockerfile-declared' || !GRAPH.has(keyKind(e.subject_key))) continue;
    const dir = builtDir(e);
    if (dir === null || unitsByDir.has(dir)) continue;
    // One that copies a code unit's folder into its image (`COPY html/ /var/www/html`) builds it.
    const copied = Array.isArray(e.attributes.copied_dirs) ? e.attributes.copied_dirs : [];
    const unit =
      copied.map((d) => unitsByDir.get(String(d))).find((u) => u !== undefined) ??
      entryUnits.get(dir);
    unitsByDir.set(dir, unit ?? e.subject_key);
  }
  // The first unit (in unitsByDir's order) of each name: an index, not a scan per image.
  const unitByName = new Map<string, string>();
  for (const u of unitsByDir.values())
    if (!unitByName.has(keyName(u))) unitByName.set(keyName(u), u);
  // A service running one program of a many-program unit is not the unit (reconcile-programs.ts).
  const runsProgram = new Set(
    evidence.filter((e) => typeof e.attributes.runs_program === 'string').map((e) => e.subject_key),
  );
  // An image the repository publishes, one tag per program (reconcile-image-tags.ts).
  const taggedUnit = unitByImageTag(evidence);
  // An image a CI step builds from a folder is that folder's unit (cloud/built-images.ts), for
  // a deployable running it (a compose service, a workload; not a chart's values listing images).
  const ciDirs = ciBuiltDirs(evidence);
  const ciUnit = (repo: string) => {
    const dir = ciDirs.get(repo.toLowerCase());
    return dir === undefined || dir === null ? undefined : unitsByDir.get(dir);
  };
  for (const e of evidence) {
    if (runsProgram.has(e.subject_key)) continue;
    const built = GRAPH.has(keyKind(e.subject_key)) ? builtDir(e) : null;
    if (built !== null) {
      const unit = unitsByDir.get(built);
      if (unit) join(unit, e.subject_key, 'build', e);
    }
    if (
      (e.evidence_kind === 'image-reference' || e.evidence_kind === 'image-push') &&
      e.object_key?.startsWith('image:')
    ) {
      // The repository's last segment (`springcommunity/petclinic-api` -> `petclinic-api`): the
      // image key flattens `/` into `-`, so it is read from the attributes when present.
      const repo =
        typeof e.attributes.repo === 'string' ? e.attributes.repo : e.object_key.slice(6);
      const base = normalizeName(repo.split('/').pop() ?? '');
      // A value that is a URL (`image: https://github.com/org/repo`) names no image.
      const unit = repo.includes('://')
        ? undefined
        : (unitByName.get(base) ??
          taggedUnit(e) ??
          (declarations.has(e.subject_key) ? ciUnit(repo) : undefined));
      // A Dockerfile's `FROM` (`built_from`) is the base of another image, not the image the
      // service runs: `FROM java` built by the repository's `java/Dockerfile` is no identity.
      if (
        unit &&
        keyKind(e.subject_key) === 'service' &&
        e.evidence_kind === 'image-reference' &&
        e.relationship_kind !== 'built_from'
      )
        join(unit, e.subject_key, 'image', e);
    }
  }

  // Settings files given to containers are theirs (reconcile-mounted.ts).
  const mounted = mountedSettings(evidence, (k) => uf.find(k), [...declarations.keys()]);
  // Store addresses of programs' own code and settings, before settings files no container reads
  // are set aside (loopback ones: reconcile-depended-stores.ts).
  const addresses = evidence.filter((e) => e.evidence_kind === 'connection-string');
  evidence = mounted.evidence;
  // Each set's kind and whether it is an entity at all, from its own evidence (identitySets).
  const { finalKey, dropped, engines } = identitySets(evidence, subjects, (k) => uf.find(k));
  for (const k of mounted.settingsOnly) dropped.add(uf.find(k));
  const rep = (key: string) => {
    const r = uf.find(key);
    return finalKey.get(r) ?? r;
  };
  const placed = (key: string) => !dropped.has(uf.find(key));
  const entityEvidence = new Map<string, StoredEvidence[]>();
  const members = new Map<string, Set<string>>();
  for (const key of subjects) {
    const r = rep(key);
    members.set(r, (members.get(r) ?? new Set()).add(key));
  }
  // An embedded store is also known by the database file it opens (`Data Source=discountdb`),
  // a name only, never a merge: unless something else in the graph is called that.
  // It is also named after its owner as deployed (`datastore:root-sqlite` of the unit a compose
  // service `web` builds is also `datastore:web-sqlite`), again a name only.
  for (const e of evidence) {
    if (e.evidence_kind !== 'datastore-declared' || e.attributes.embedded !== true) continue;
    const { database: file, owner, engine } = e.attributes;
    const names = typeof file === 'string' ? [file] : [];
    if (typeof owner === 'string' && typeof engine === 'string')
      names.push(`${keyName(rep(owner))}-${engine}`);
    for (const n of names)
      if (!byName.has(normalizeName(n)))
        members.get(rep(e.subject_key))?.add(entityKey('datastore', n));
  }
  for (const e of evidence) {
    if (!GRAPH.has(keyKind(e.subject_key)) || !placed(e.subject_key)) continue;
    const r = rep(e.subject_key);
    pushTo(entityEvidence, r, e);
  }
  // Entities only referenced as objects (an external API host) still exist, cited by the reference.
  for (const e of evidence) {
    if (e.object_key && GRAPH.has(keyKind(e.object_key)) && placed(e.object_key)) {
      if (!placed(e.subject_key) && GRAPH.has(keyKind(e.subject_key))) continue;
      const r = rep(e.object_key);
      if (!entityEvidence.has(r)) entityEvidence.set(r, [e]);
    }
  }

  const entities: Entity[] = [...entityEvidence.entries()]
    .map(([key, ev]) => {
      const aliases = [...(members.get(key) ?? new Set([key]))].filter((k) => k !== key).sort();
      // Only statements about the entity itself can contradict each other: evidence relating it
      // to something else (a client library, a connection to postgres and another to redis)
      // describes that other thing, so two such records are no disagreement about the entity.
      const contradictions = contradictionsOf(
        ev.filter((e) => rep(e.subject_key) === key && e.object_key === null),
      );
      return {
        canonical_key: key,
        kind: keyKind(key),
        name: keyName(key),
        // Likewise attributes: a record relating the entity to something else (`pg` connecting
        // to postgres: engine postgresql) describes the other end, not the entity.
        attributes: {
          // The engine a repository Dockerfile is built FROM, when that typed the entity.
          ...(engines.has(key) ? { engine: engines.get(key) } : {}),
          ...mergeAttributes(
            ev.filter((e) => rep(e.subject_key) === key && e.object_key === null),
            aliases,
          ),
        },
        confidence: confidence(ev, contradictions.length),
        evidence_ids: ev.map((e) => e.id).sort(),
        sources: [...new Set(ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  const configured = new Set(
    evidence
      .filter(
        (e) =>
          e.source_type !== 'code' &&
          e.evidence_kind !== 'env-default' &&
          typeof e.attributes.variable === 'string',
      )
      .map((e) => `${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
  );
  const imageDefaults = new Set(
    evidence
      .filter((e) => e.evidence_kind === 'env-default' && typeof e.attributes.variable === 'string')
      .map((e) => `${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
  );
  // A URL written as a placeholder's default (`${PAYMENTS_URL:http://payments:8080}`) is the
  // read's default, not a connection of its own: once configuration sets the variable, the
  // connection found in that default on the same line is not in effect.
  const overriddenDefaults = new Set(
    evidence
      .filter(
        (e) =>
          e.evidence_kind === 'env-read' &&
          typeof e.attributes.default === 'string' &&
          configured.has(`${rep(e.subject_key)}\u0000${String(e.attributes.variable)}`),
      )
      .map(
        (e) =>
          `${e.location.path}\u0000${e.location.start_line}\u0000${defaultHost(String(e.attributes.default))}`,
      ),
  );
  const relEvidence = new Map<string, RelEntry>();
  const overridden = (e: StoredEvidence) =>
    overriddenDefaults.has(
      `${e.location.path}\u0000${e.location.start_line}\u0000${String(e.attributes.host)}`,
    );
  const handed = handedAddresses(evidence, rep);
  for (const e of evidence) {
    if (!e.relationship_kind || !e.object_key) continue;
    if (handed(e)) continue;
    if (!GRAPH.has(keyKind(e.subject_key)) || !GRAPH.has(keyKind(e.object_key))) continue;
    if (!placed(e.subject_key) || !placed(e.object_key)) continue;
    if (e.evidence_kind === 'connection-string' && overridden(e)) continue;
    const source = rep(e.subject_key);
    const target = rep(e.object_key);
    if (source === target) continue;
    const key = `${e.relationship_kind}:${source}->${target}`;
    const entry = relEvidence.get(key) ?? { kind: e.relationship_kind, source, target, ev: [] };
    entry.ev.push(e);
    const mount = mounted.mountOf.get(e);
    if (mount && !entry.ev.includes(mount)) entry.ev.push(mount);
    relEvidence.set(key, entry);
  }
  // Defaults: code that reads VAR with a default host (`os.getenv("REDIS_HOST", "redis")`,
  // `GetEnvironmentVariable("POSTGRES_HOST") ?? "db"`) connects to that host when no
  // configuration of the service sets VAR, since the default is then the value in effect. Only a
  // host the graph knows (a declared service or datastore) resolves; others stay plain reads.
  // A Dockerfile `ENV VAR=...` (`env-default`) is such a default too: it is in effect unless the
  // deployment configuration sets VAR, and it overrides the code's default.
  for (const read of evidence) {
    const imageDefault = read.evidence_kind === 'env-default';
    if (read.evidence_kind !== 'env-read' && !imageDefault) continue;
    if (typeof read.attributes.variable !== 'string') continue;
    if (typeof read.attributes.default !== 'string') continue;
    if (!GRAPH.has(keyKind(read.subject_key)) || handed(read)) continue;
    const source = rep(read.subject_key);
    const slot = `${source}\u0000${read.attributes.variable}`;
    if (configured.has(slot) || (!imageDefault && imageDefaults.has(slot))) continue;
    const host = defaultHost(read.attributes.default);
    if (!host) continue;
    if (!placed(read.subject_key)) continue;
    const targets = [...new Set((byName.get(normalizeName(host)) ?? []).filter(placed).map(rep))];
    const target = targets.length === 1 ? targets[0]! : null;
    if (!target || target === source) continue;
    const key = `connects_to:${source}->${target}`;
    const entry = relEvidence.get(key) ?? { kind: 'connects_to', source, target, ev: [] };
    entry.ev.push(read);
    relEvidence.set(key, entry);
  }
  // Dapr secrets: the secret an application reads names the server it connects to.
  const hostEntity = (host: string) => {
    const targets = [...new Set((byName.get(normalizeName(host)) ?? []).filter(placed).map(rep))];
    return targets.length === 1 ? targets[0]! : null;
  };
  const placedRep = (k: string) => (GRAPH.has(keyKind(k)) && placed(k) ? rep(k) : null);
  // A host the graph does not know at all: the one store of the secret's engine, if one.
  const storesByEngine = new Map<string, Set<string>>();
  for (const e of evidence) {
    const engine = e.attributes.engine;
    if (e.source_type !== 'cloud' || !/^(datastore|queue)-declared$/.test(e.evidence_kind))
      continue;
    if (typeof engine !== 'string' || !placed(e.subject_key)) continue;
    const family = engineFamily(engine);
    storesByEngine.set(family, (storesByEngine.get(family) ?? new Set()).add(rep(e.subject_key)));
  }
  const engineStore = (host: string, engine: string) => {
    if (byName.has(normalizeName(host))) return null;
    const stores = [...(storesByEngine.get(engineFamily(engine)) ?? [])];
    return stores.length === 1 ? stores[0]! : null;
  };
  for (const c of daprSecretConnections(evidence, placedRep, hostEntity, engineStore)) {
    const key = `connects_to:${c.source}->${c.target}`;
    const entry = relEvidence.get(key) ?? { kind: 'connects_to', ...c, ev: [] };
    entry.ev.push(...c.ev);
    relEvidence.set(key, entry);
  }
  // A managed store the code reaches through its cloud SDK, by name (reconcile-sdk-stores.ts).
  for (const [key, entry] of sdkStoreEdges(evidence, relEvidence, rep, placed))
    relEvidence.set(key, entry);
  // A local address reaching the one compose store published on its port (reconcile-local-stores.ts).
  const local = localStoreEdges(
    evidence.filter((e) => !(e.evidence_kind === 'connection-string' && overridden(e))),
    relEvidence,
    rep,
    placed,
  );
  for (const [key, entry] of local) relEvidence.set(key, entry);
  // A host-network container's local address reaching the one unit listening on that host port
  // (reconcile-host-network.ts).
  for (const [key, entry] of hostNetworkEdges(evidence, relEvidence, rep, placed))
    relEvidence.set(key, entry);
  // Services run on the developer's host: a loopback port another of them listens on
  // (reconcile-local-run.ts).
  for (const [key, entry] of localRunEdges(evidence, relEvidence, rep, placed))
    relEvidence.set(key, entry);
  // A unit no deployment configures: the addresses of its env template (reconcile-env-templates.ts).
  for (const [key, entry] of templateEdges(evidence, relEvidence, rep, placed, hostEntity))
    relEvidence.set(key, entry);
  // A scheme-less settings address naming a deployed unit (reconcile-settings-addresses.ts).
  for (const [key, entry] of settingsAddressEdges(evidence, relEvidence, rep, placed, hostEntity))
    relEvidence.set(key, entry);
  // A compose store a vendor container depends on and has no address for (reconcile-depended-stores.ts).
  for (const [key, entry] of dependedStoreEdges(evidence, relEvidence, rep, placed, addresses))
    relEvidence.set(key, entry);
  // A store a program's own settings name at the developer's loopback (reconcile-settings-stores.ts).
  const known = new Set(entities.map((e) => e.canonical_key));
  const fromSettings = settingsStoreEdges(evidence, relEvidence, rep, placed, addresses, known);
  for (const [key, entry] of fromSettings.edges) relEvidence.set(key, entry);
  entities.push(...fromSettings.stores.filter((s) => !known.has(s.canonical_key)));
  entities.sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));
  // Corroboration: code that reads VAR, where configuration wires VAR of the same service to a
  // target. Relationships are indexed by source, so each read looks only at its service's own.
  const relsBySource = new Map<string, Array<{ ev: StoredEvidence[] }>>();
  for (const rel of relEvidence.values()) pushTo(relsBySource, rel.source, rel);
  for (const read of evidence.filter(
    (e) => e.evidence_kind === 'env-read' && typeof e.attributes.variable === 'string',
  )) {
    for (const rel of relsBySource.get(rep(read.subject_key)) ?? []) {
      if (
        rel.ev.some((e) => e.attributes.variable === read.attributes.variable && e.id !== read.id)
      )
        rel.ev.push(read);
    }
  }
  const receivedOnly = receivedOnlyEdges(evidence, relEvidence, rep);
  const relationships: Relationship[] = [...relEvidence.entries()]
    .filter(([key]) => receivedOnly.get(key) !== 'dropped')
    .map(([key, r]) => {
      const contradictions = contradictionsOf(r.ev);
      const received = receivedOnly.has(key);
      return {
        canonical_key: key,
        source_key: r.source,
        target_key: r.target,
        kind: r.kind,
        attributes: {
          via: [...new Set(r.ev.map((e) => e.evidence_kind))].sort(),
          variables: [...new Set(r.ev.map((e) => e.attributes.variable).filter(Boolean))].sort(),
          ...(received ? { received_only: true } : {}),
          ...(r.basis ? { basis: r.basis } : {}),
        },
        confidence: capped(confidence(r.ev, contradictions.length, received), r.cap),
        evidence_ids: [...new Set(r.ev.map((e) => e.id))].sort(),
        sources: [...new Set(r.ev.map((e) => e.source_type))].sort(),
        contradictions,
      };
    })
    .sort((a, b) => a.canonical_key.localeCompare(b.canonical_key));

  const conflicts: IdentityConflict[] = [...clashes.values()]
    .map((c) => {
      const keys = [...new Set(c.keys.map(rep))].sort();
      return {
        keys,
        rule: c.rule,
        evidence_ids: c.ids,
        shared: c.shared,
        detail: `${keys.join(' and ')} are distinct deployables that ${RULE_TEXT[c.rule] ?? c.rule}; they were kept apart, and only one of them took the shared identity.`,
      };
    })
    .sort((a, b) => a.keys.join(',').localeCompare(b.keys.join(',')));
  return {
    entities,
    relationships,
    ...(conflicts.length ? { conflicts } : {}),
    ...(variants.length ? { variants } : {}),
  };
}

/** A confidence (two decimals) no higher than an inference's cap. */
function capped(value: string, cap?: number): string {
  return cap === undefined || Number(value) <= cap ? value : cap.toFixed(2);
}

/** Appends to the list under `key` (in place: spreading a copy per item is quadratic). */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Buckets and queues that only variables name, by their plain name (`resolution: bucket-name`). */
function plainNamedResources(evidence: StoredEvidence[]): Set<string> {
  const plain = new Set<string>();
  const other = new Set<string>();
  for (const e of evidence) {
    other.add(e.subject_key);
    if (!e.object_key) continue;
    const r = e.attributes.resolution;
    if (r === 'bucket-name' || r === 'queue-name') plain.add(e.object_key);
    else other.add(e.object_key);
  }
  for (const k of other) plain.delete(k);
  return plain;
}

/**
 * The names each deployment declaration gives its deployable (its key's name, a compose
 * `hostname` and `container_name`), normalized as keys are, to the declared keys.
 */
function deployedNames(evidence: StoredEvidence[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of evidence) {
    if (!DEPLOYMENT_KINDS.has(e.evidence_kind) || keyKind(e.subject_key) !== 'service') continue;
    const names = [keyName(e.subject_key)];
    for (const a of [e.attributes.hostname, e.attributes.container_name])
      if (typeof a === 'string' && a !== '') names.push(normalizeName(a));
    for (const n of new Set(names)) {
      const keys = out.get(n) ?? [];
      if (!keys.includes(e.subject_key)) pushTo(out, n, e.subject_key);
    }
  }
  return out;
}

function orderKey(e: StoredEvidence): string {
  const l = e.location;
  return [
    e.source_type,
    l.path,
    String(l.start_line).padStart(8, '0'),
    String(l.end_line).padStart(8, '0'),
    e.evidence_kind,
    e.subject_key,
    e.object_key ?? '',
    e.content_sha256,
    JSON.stringify(e.attributes),
  ].join('\u0000');
}

export type { SourceType };
