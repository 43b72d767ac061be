/**
 * Skaffold configuration: what `skaffold run` deploys (the manifests, kustomizations and charts
 * of its top-level configs, not of its profiles) and which folder builds each image it names.
 * The first decides the primary deployment variant (analysis/variants.ts); the second links an
 * image a deployment runs to the Dockerfile that builds it (analysis/cloud/built-images.ts).
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments } from '../shared/yaml';

export const SKAFFOLD = /^skaffold([.-][\w-]+)?\.ya?ml$/;

export function isSkaffold(path: string): boolean {
  return SKAFFOLD.test(basename(path));
}

/** An image Skaffold builds, and from where (repository paths). */
export interface SkaffoldArtifact {
  image: string;
  context: string;
  dockerfile: string | null;
  path: string;
}

/** Every config document of a Skaffold file (`apiVersion: skaffold/...`, `kind: Config`). */
function configs(file: SourceFile) {
  const y = parseYamlDocuments(file);
  return {
    errors: y.errors,
    docs: y.docs.filter(
      (d) =>
        isRecord(d.value) &&
        String(d.value.apiVersion ?? '').startsWith('skaffold/') &&
        d.value.kind === 'Config',
    ),
  };
}

/** The images Skaffold builds, each with its context folder. */
export function skaffoldArtifacts(files: SourceFile[]): SkaffoldArtifact[] {
  const out: SkaffoldArtifact[] = [];
  for (const file of files) {
    for (const doc of configs(file).docs) {
      const v = doc.value as Record<string, unknown>;
      const build = isRecord(v.build) ? v.build : {};
      for (const a of asArray(build.artifacts).filter(isRecord)) {
        const image = asString(a.image);
        const context = joinPath(dirname(file.path), asString(a.context) ?? '.');
        if (!image || context === null) continue;
        const docker = isRecord(a.docker) ? a.docker : {};
        out.push({ image, context, dockerfile: asString(docker.dockerfile), path: file.path });
      }
    }
  }
  return out;
}

/** One `deploy-manifests` record per config: the paths `skaffold run` applies. */
export function analyzeSkaffold(files: SourceFile[]): AnalyzerOutput {
  const out: Evidence[] = [];
  const gaps: AnalyzerOutput['gaps'] = [];
  for (const file of files) {
    const { errors, docs } = configs(file);
    for (const message of errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    for (const doc of docs) {
      const v = doc.value as Record<string, unknown>;
      const paths: string[] = [];
      const add = (p: unknown) => {
        const s = asString(p);
        const j = s ? joinPath(dirname(file.path), s) : null;
        if (j) paths.push(j);
      };
      // v2+ `manifests:`; v1 `deploy.kubectl.manifests`, `deploy.kustomize`, `deploy.helm`.
      const manifests = isRecord(v.manifests) ? v.manifests : {};
      const deploy = isRecord(v.deploy) ? v.deploy : {};
      const kubectl = isRecord(deploy.kubectl) ? deploy.kubectl : {};
      asArray(manifests.rawYaml).forEach(add);
      asArray(kubectl.manifests).forEach(add);
      for (const k of [manifests.kustomize, deploy.kustomize])
        if (isRecord(k)) asArray(k.paths).forEach(add);
      for (const h of [manifests.helm, deploy.helm])
        if (isRecord(h))
          for (const r of asArray(h.releases).filter(isRecord)) add(r.chartPath ?? r.chart);
      if (paths.length === 0) continue;
      const at = v.manifests !== undefined ? ['manifests'] : ['deploy'];
      out.push(
        evidence(file, doc.span(at), {
          source: 'cloud',
          provider: 'skaffold',
          kind: 'deploy-manifests',
          subject: entityKey('tool', 'skaffold'),
          summary: `skaffold deploys ${paths.join(', ')}`,
          attributes: { tool: 'skaffold', manifests: paths },
        }),
      );
    }
  }
  return { evidence: out, gaps };
}
