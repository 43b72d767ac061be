/**
 * The code analyzer: deployable units, declared dependencies and client libraries, the
 * cross-unit import graph, and connections (URLs, DSNs, env reads, external API calls) found in
 * the repository's files. Pure: files in, evidence and gaps out; deterministic
 * (sorted by path, line, kind, ...); never throws on bad input.
 */
import { analyzerErrorGap } from '../shared/evidence';
import {
  compareGaps,
  type AnalyzerGap,
  type AnalyzerOutput,
  type Evidence,
  type SourceFile,
} from '../evidence';
import { dirname, normalizePath } from '../shared/paths';
import { finalizeEvidence, isSkippedPath } from './common';
import { aspireEvidence } from './aspire';
import { testcontainersEvidence } from './testcontainers';
import { configKeyEvidence } from './config-keys';
import { entrySettingsEvidence } from './entry-settings';
import { luaClientEvidence } from './lua-clients';
import { scriptAddressEvidence } from './script-addresses';
import { cloudRunDeployEvidence } from './cloud-run-deploys';
import { googleCloudStoreEvidence } from './google-cloud-stores';
import { demoteImportedPackages } from './imported-packages';
import { analyzeConnections } from './connections';
import { daprSecretReadEvidence } from './dapr-secret-reads';
import { consulRegistrationEvidence } from './consul-registration';
import { eurekaRegistrationEvidence } from './eureka-registration';
import { discoveryEvidence } from './discovery';
import { embeddedStoreEvidence } from './embedded';
import { embeddedBrokerEvidence } from './embedded-brokers';
import { gatewayEvidence } from './gateways';
import { goImportClientEvidence } from './go-import-clients';
import { importEvidence } from './imports';
import { manifestEvidence } from './manifests';
import { programEvidence } from './programs';
import { registryNameEvidence } from './registry-names';
import { javaRegistryEvidence } from './registry-java';
import { serveSpringConfig } from './spring-cloud';
import { detectUnits } from './units';
import { appSettingsSecrets, isAppSettings } from '../cloud/settings-secrets';

export type { CodeModel, Unit } from './model';
export { detectUnits } from './units';
export { parseManifest, packageKey } from './manifests';
export { classifyClient } from './clients';

function prepare(files: unknown, gaps: AnalyzerGap[]): SourceFile[] {
  if (!Array.isArray(files)) {
    gaps.push({ path: '', reason: 'invalid_input', message: 'files is not an array' });
    return [];
  }
  const byPath = new Map<string, SourceFile>();
  for (const f of files as unknown[]) {
    const rec = f && typeof f === 'object' ? (f as Record<string, unknown>) : null;
    const rawPath = rec && typeof rec.path === 'string' ? rec.path : null;
    if (rawPath === null || typeof rec?.text !== 'string') {
      gaps.push({
        path: rawPath ?? '',
        reason: 'invalid_file',
        message: 'file without a string path and text',
      });
      continue;
    }
    const path = normalizePath(rawPath);
    if (path === null) {
      gaps.push({
        path: rawPath,
        reason: 'invalid_file',
        message: 'path is empty or outside the repository',
      });
      continue;
    }
    if (isSkippedPath(path)) continue;
    if (byPath.has(path)) {
      gaps.push({
        path,
        reason: 'duplicate_path',
        message: 'the same path was given more than once; the first was used',
      });
      continue;
    }
    byPath.set(path, { path, text: rec.text });
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function guarded<T>(gaps: AnalyzerGap[], path: string, what: string, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (err) {
    gaps.push(analyzerErrorGap(path, what, err));
    return fallback;
  }
}

/** A Go read in a function its own unit calls from another package is no one importer's (`go_function` dropped). */
function withinCalls(evidence: Evidence[], selectedWithin: Set<string>): Evidence[] {
  for (const e of evidence) {
    const fn = e.attributes.go_function;
    if (e.evidence_kind !== 'env-read' || typeof fn !== 'string') continue;
    const dir = dirname(e.location.path);
    if (selectedWithin.has(`${dir}.${fn}`) || selectedWithin.has(`${dir}.*`))
      delete e.attributes.go_function;
  }
  return evidence;
}

export async function analyzeCode(files: SourceFile[]): Promise<AnalyzerOutput> {
  const gaps: AnalyzerGap[] = [];
  const evidence: Evidence[] = [];
  const prepared = prepare(files, gaps);
  const detection = guarded(gaps, '', 'unit detection', () => detectUnits(prepared), null);
  if (detection) {
    evidence.push(...detection.evidence);
    // Spring identities, and config-server files moved to the units they configure.
    const spring = guarded(
      gaps,
      '',
      'Spring Cloud configuration',
      () => serveSpringConfig(detection.model),
      {
        model: detection.model,
        evidence: [],
      },
    );
    const { model } = spring;
    evidence.push(...spring.evidence);
    gaps.push(...detection.gaps);
    for (const unit of model.units) {
      evidence.push(
        ...guarded(
          gaps,
          unit.dir,
          `manifests of ${unit.name}`,
          () => manifestEvidence(unit, model.filesByUnit.get(unit.key) ?? [], model.fileByPath),
          [],
        ),
      );
      // A program of a many-program Go module: the clients its own files import.
      evidence.push(
        ...guarded(
          gaps,
          unit.dir,
          `Go client imports of ${unit.name}`,
          () => goImportClientEvidence(unit, model.filesByUnit.get(unit.key) ?? []),
          [],
        ),
      );
    }
    const selectedWithin = new Set<string>();
    evidence.push(
      ...guarded(gaps, '', 'import analysis', () => importEvidence(model, selectedWithin), []),
    );
    const conn = guarded(gaps, '', 'connection analysis', () => analyzeConnections(model), {
      evidence: [],
      gaps: [],
    });
    evidence.push(...withinCalls(conn.evidence, selectedWithin));
    gaps.push(...conn.gaps);
    evidence.push(...guarded(gaps, '', 'gateway routes', () => gatewayEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'Aspire AppHost', () => aspireEvidence(model), []));
    evidence.push(
      ...guarded(gaps, '', 'Testcontainers launchers', () => testcontainersEvidence(model), []),
    );
    evidence.push(...guarded(gaps, '', 'service ids', () => discoveryEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'Dapr secrets', () => daprSecretReadEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'embedded stores', () => embeddedStoreEvidence(model), []));
    evidence.push(
      ...guarded(gaps, '', 'embedded brokers', () => embeddedBrokerEvidence(model), []),
    );
    evidence.push(...guarded(gaps, '', 'programs', () => programEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'configuration keys', () => configKeyEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'settings entries', () => entrySettingsEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'Lua clients', () => luaClientEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'script addresses', () => scriptAddressEvidence(model), []));
    evidence.push(
      ...guarded(gaps, '', 'Cloud Run deploys', () => cloudRunDeployEvidence(model), []),
    );
    evidence.push(
      ...guarded(gaps, '', 'Google Cloud stores', () => googleCloudStoreEvidence(model), []),
    );
    evidence.push(...guarded(gaps, '', 'registry names', () => registryNameEvidence(model), []));
    evidence.push(...guarded(gaps, '', 'java registry', () => javaRegistryEvidence(model), []));
    evidence.push(
      ...guarded(gaps, '', 'consul registration', () => consulRegistrationEvidence(model), []),
    );
    evidence.push(
      ...guarded(gaps, '', 'eureka registration', () => eurekaRegistrationEvidence(model), []),
    );
  }
  for (const f of prepared.filter((x) => isAppSettings(x.path)))
    evidence.push(...guarded(gaps, f.path, 'settings secrets', () => appSettingsSecrets(f), []));
  const sortedGaps = [...gaps]
    .sort(compareGaps)
    .filter((g, i, all) => i === 0 || compareGaps(all[i - 1] as AnalyzerGap, g) !== 0);
  return Promise.resolve({
    evidence: finalizeEvidence(demoteImportedPackages(evidence)),
    gaps: sortedGaps,
  });
}
