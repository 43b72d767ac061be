/**
 * One image, one engine (docs/decisions.md, "Containers of one image run one engine"). A compose
 * project may run the same unknown image (`image: orders-db`, built by a script, pulled from a
 * private registry) in several services: a primary database and its copy in a second site, a
 * replica. What the image runs is a property of the image, not of the container: when one of
 * those services' own declaration says which engine it runs (an engine's well-known port, a port
 * named after it, a variable only its server reads: classifyDeclared), a service running the very
 * same image with no such clue of its own runs that engine too.
 *
 * Not done: images of a well-known engine (classifyImage types them already), images the service
 * builds itself (`build:`, a program of the repository that may run several ways), and images
 * whose services' clues disagree (two engines: none is taken). The image is matched as written
 * after `.env` interpolation (`repo:tag`), so `orders-db:1` and `orders-db:2` are not peers.
 * Pure and deterministic.
 */
import { parseImageRef } from '../shared/images';
import { asArray, asString, isRecord } from '../shared/values';
import { compareStrings } from '../shared/text';
import { classifyDeclared, classifyImage, type ContainerFacts, type ImageClass } from './common';
import type { ComposeFile } from './compose-merge';
import { environment, interpolate, parsePort } from './compose-values';

/** An engine a service's image runs, told by another service of the project running that image. */
export type PeerClass = ImageClass & { clue: string };

/**
 * What a compose service's own declaration says about the engine it runs: the container ports of
 * its mappings and `expose`, their names, the names of the variables it is given.
 */
export function composeFacts(
  svc: Record<string, unknown>,
  vars: Map<string, string>,
): ContainerFacts {
  const ports = asArray(svc.ports).map((p) =>
    parsePort(typeof p === 'string' ? interpolate(p, vars) : p),
  );
  return {
    ports: [
      ...ports.map((p) => p?.target.split('-')[0] ?? ''),
      ...asArray(svc.expose).map((p) => String(p).split('/')[0] ?? ''),
    ],
    portNames: ports.map((p) => p?.name ?? '').filter(Boolean),
    env: environment(svc.environment).map((e) => e.name),
  };
}

/**
 * Per image (as written, interpolated) that services of the project only pull and that is no
 * well-known engine: the engine the declarations of those services agree on, with the clue naming
 * the service that told it. Images whose services tell nothing, or disagree, are absent.
 */
export function enginesByImage(
  files: ComposeFile[],
  vars: Map<string, string>,
): Map<string, PeerClass> {
  const told = new Map<string, Array<{ service: string; cls: ImageClass & { clue: string } }>>();
  const disagree = new Set<string>();
  for (const cf of files) {
    for (const [name, svc] of Object.entries(cf.services)) {
      if (!isRecord(svc) || svc.build !== undefined) continue;
      const spec = asString(svc.image);
      const image = spec === null ? null : parseImageRef(interpolate(spec, vars));
      if (!image || classifyImage(image)) continue;
      const cls = classifyDeclared(composeFacts(svc, vars));
      if (!cls) continue;
      const list = told.get(image.raw) ?? [];
      if (list.some((t) => t.cls.engine !== cls.engine || t.cls.kind !== cls.kind))
        disagree.add(image.raw);
      list.push({ service: name, cls });
      told.set(image.raw, list);
    }
  }
  const out = new Map<string, PeerClass>();
  for (const [raw, list] of told) {
    if (disagree.has(raw)) continue;
    const first = [...list].sort((a, b) => compareStrings(a.service, b.service))[0]!;
    out.set(raw, {
      kind: first.cls.kind,
      engine: first.cls.engine,
      clue: `runs image ${raw}, as does ${first.service} (${first.cls.clue})`,
    });
  }
  return out;
}
