/**
 * kustomization.yaml: what an overlay assembles (resources, name prefix/suffix, namespace) and the
 * image overrides it applies; secretGenerator literals are reported without their values.
 */
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { dirname } from '../shared/paths';
import { isLiteralValue, placeholderReason } from '../shared/secrets';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments, type YamlDoc } from '../shared/yaml';

const PROVIDER = 'kustomize';

export function isKustomization(path: string): boolean {
  return /(^|\/)(kustomization\.ya?ml|Kustomization)$/.test(path);
}

/** Canonical key of a kustomization: its directory (`kustomization:deploy-overlays-prod`). */
export function kustomizationKey(path: string): string {
  return entityKey('kustomization', dirname(path) || 'root');
}

export function analyzeKustomize(files: SourceFile[]): AnalyzerOutput {
  const evidence: Evidence[] = [];
  const gaps: AnalyzerGap[] = [];
  for (const file of files) {
    const y = parseYamlDocuments(file);
    for (const message of y.errors)
      gaps.push({ path: file.path, reason: 'yaml_parse_error', message });
    const doc = y.docs[0];
    if (doc && isRecord(doc.value)) evidence.push(...kustomizationEvidence(file, doc));
  }
  return { evidence, gaps };
}

function strings(v: unknown): string[] {
  return asArray(v)
    .map((x) => (isRecord(x) ? asString(x.path) : asString(x)))
    .filter((x): x is string => x !== null);
}

function kustomizationEvidence(file: SourceFile, doc: YamlDoc): Evidence[] {
  const v = doc.value as Record<string, unknown>;
  const subject = kustomizationKey(file.path);
  const dir = dirname(file.path) || '.';
  const images = asArray(v.images).map((i) =>
    isRecord(i)
      ? {
          name: asString(i.name),
          new_name: asString(i.newName),
          new_tag: asString(i.newTag),
          digest: asString(i.digest),
        }
      : null,
  );
  const generatorNames = (g: unknown) =>
    asArray(g).flatMap((x) => (isRecord(x) && asString(x.name) ? [String(x.name)] : []));
  const out: Evidence[] = [
    evidence(file, doc.span([]), {
      source: 'cloud',
      provider: PROVIDER,
      kind: 'kustomization-declared',
      subject,
      summary: `kustomization ${dir} assembles ${plural(strings(v.resources).length, 'resource')}`,
      attributes: {
        dir,
        namespace: asString(v.namespace),
        resources: strings(v.resources),
        bases: strings(v.bases),
        components: strings(v.components),
        namePrefix: asString(v.namePrefix),
        nameSuffix: asString(v.nameSuffix),
        images: images.filter((i) => i !== null),
        // The patch files it applies (`patches[].path`, `patchesStrategicMerge`, JSON 6902).
        patch_files: [
          ...strings(v.patches),
          ...strings(v.patchesStrategicMerge),
          ...strings(v.patchesJson6902),
        ],
        patches:
          asArray(v.patches).length +
          asArray(v.patchesStrategicMerge).length +
          asArray(v.patchesJson6902).length,
        commonLabels: isRecord(v.commonLabels) ? v.commonLabels : null,
        helm_charts: asArray(v.helmCharts).flatMap((c) =>
          isRecord(c) && asString(c.name) ? [String(c.name)] : [],
        ),
        config_map_generators: generatorNames(v.configMapGenerator),
        secret_generators: generatorNames(v.secretGenerator),
      },
    }),
  ];
  images.forEach((img, i) => {
    if (!img?.name) return;
    const repo = img.new_name ?? img.name;
    const raw = `${repo}${img.new_tag ? `:${img.new_tag}` : ''}${img.digest ? `@${img.digest}` : ''}`;
    const image = parseImageRef(raw);
    if (!image) return;
    const change = [
      img.new_name ? `to ${img.new_name}` : null,
      img.new_tag ? `tag ${img.new_tag}` : null,
      img.digest ? `digest ${img.digest}` : null,
    ]
      .filter(Boolean)
      .join(', ');
    out.push(
      evidence(file, doc.span(['images', i]), {
        source: 'cloud',
        provider: PROVIDER,
        kind: 'image-reference',
        subject,
        relationship: 'overrides_image',
        object: imageKey(image),
        summary: `kustomization ${dir} overrides image ${img.name} (${change || 'unchanged'})`,
        attributes: { ...imageAttributes(image), original: img.name, ...img },
      }),
    );
  });
  asArray(v.secretGenerator).forEach((g, i) => {
    if (!isRecord(g)) return;
    asArray(g.literals).forEach((lit, j) => {
      const s = asString(lit) ?? '';
      const eq = s.indexOf('=');
      if (eq < 0 || !isLiteralValue(s.slice(eq + 1))) return;
      const variable = s.slice(0, eq);
      const placeholder = placeholderReason(s.slice(eq + 1));
      out.push(
        evidence(file, doc.span(['secretGenerator', i, 'literals', j]), {
          source: 'cloud',
          provider: PROVIDER,
          kind: 'literal-secret',
          subject: entityKey('secret', asString(g.name) ?? variable),
          summary: `kustomization ${dir} generates secret ${String(g.name)} with a ${placeholder ? 'placeholder' : 'literal'} value for ${variable}`,
          attributes: {
            variable,
            source: 'secretGenerator',
            ...(placeholder ? { placeholder } : {}),
          },
        }),
      );
    });
  });
  return out;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
