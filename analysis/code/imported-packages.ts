/**
 * A Python folder another unit imports is a package of that code, not a service
 * (docs/decisions.md, "A Python unit other code imports, with nothing of its own that runs, is a
 * library"). A folder with its own `requirements.txt` or `setup.py` becomes a code unit, and
 * with no other sign it is classed a service by default (analysis/code/classify.ts). When
 * another unit's code imports it (`from data import store`, a generated client package the web
 * app imports), it is code others run: a library. Only the default class is changed: a unit with
 * a Dockerfile, a server framework or any other sign of its own keeps its class, and a
 * deployment that builds or runs the folder still makes it an entity (reconcile).
 */
import type { Evidence } from '../evidence';
import { DEFAULT_SERVICE_REASON } from './classify';

/** Whether a unit-declared record is a Python unit classed a service only by default. */
function isDefaultPythonService(e: Evidence): boolean {
  const a = e.attributes;
  return (
    e.evidence_kind === 'unit-declared' &&
    a.unit_class === 'service' &&
    a.class_reason === DEFAULT_SERVICE_REASON &&
    a.has_dockerfile !== true &&
    Array.isArray(a.ecosystems) &&
    a.ecosystems.length > 0 &&
    a.ecosystems.every((x) => x === 'pypi')
  );
}

/**
 * The evidence with each default-classed Python unit that another unit imports re-classed a
 * library (a new record; the others are returned as they are).
 */
export function demoteImportedPackages(evidence: Evidence[]): Evidence[] {
  const importers = new Map<string, string>();
  for (const e of evidence)
    if (e.evidence_kind === 'import' && e.object_key !== null && e.object_key !== e.subject_key)
      importers.set(e.object_key, e.subject_key);
  return evidence.map((e) => {
    const by = importers.get(e.subject_key);
    if (by === undefined || !isDefaultPythonService(e)) return e;
    return {
      ...e,
      attributes: {
        ...e.attributes,
        unit_class: 'library',
        class_reason: `imported by unit ${by.slice(by.indexOf(':') + 1)}, with nothing of its own that runs (no Dockerfile, no server)`,
      },
    };
  });
}
