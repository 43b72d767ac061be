/**
 * Development containers (docs/decisions.md, "A dev container's compose file is no deployment"):
 * a compose file under a `.devcontainer/` folder starts the editor's workspace container and the
 * stores a developer needs beside it (VS Code Dev Containers, Codespaces). When the repository
 * deploys the system otherwise (a compose service or a workload declared outside such a
 * folder), that compose file is no deployment of it: as for a non-primary deployment variant, it
 * keeps only the declarations of deployables the other deployments also declare (identity,
 * image), never its edges nor entities of its own. A repository whose only deployment is the
 * dev container's keeps it whole. Pure and deterministic.
 *
 * Likewise a compose file under an `example/` or `examples/` folder (a vendored library's
 * `example/hello_server/docker-compose.yaml`): it shows how to use that code, it deploys
 * nothing of the system when the repository deploys the system otherwise.
 */
import { keyName, type Evidence } from './evidence';

type Ev = Evidence & { id: string };

const DEV_DIR = /(^|\/)(\.devcontainer|examples?)\//;
const DECLARATIONS = new Set(['service-declared', 'workload-declared']);
/** What a dev container's compose file keeps of a deployable another deployment declares. */
const KEPT = new Set(['service-declared', 'image-reference']);

const inDevContainer = (e: Ev) => e.provider === 'docker-compose' && DEV_DIR.test(e.location.path);

/** Evidence without the dev containers' own deployables, when another deployment exists. */
export function withoutDevContainers<T extends Ev>(evidence: T[]): T[] {
  if (!evidence.some(inDevContainer)) return evidence;
  const deployed = new Set<string>();
  for (const e of evidence) {
    if (e.source_type !== 'cloud' || !DECLARATIONS.has(e.evidence_kind)) continue;
    if (!DEV_DIR.test(e.location.path)) deployed.add(keyName(e.subject_key));
  }
  if (deployed.size === 0) return evidence;
  return evidence.filter(
    (e) =>
      !inDevContainer(e) || (KEPT.has(e.evidence_kind) && deployed.has(keyName(e.subject_key))),
  );
}
