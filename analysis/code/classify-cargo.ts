/**
 * Cargo packages that are build automation, not a deployed unit (classify.ts; docs/decisions.md,
 * "A cargo-xtask crate is a tool"). The cargo-xtask convention (github.com/matklad/cargo-xtask):
 * a workspace's development tasks (code generation, running the stack, releases) are a binary
 * package named `xtask`, run on the developer's machine or in CI by `cargo xtask <task>` (an alias
 * of `cargo run --package xtask --`). It runs and exits; nothing deploys it. A Dockerfile (checked
 * by the caller) or a deployment that runs it still makes it a service.
 */
import { readToml, tomlText } from './toml';

/** The package name the cargo-xtask convention gives the automation crate. */
const XTASK = /^xtask$/i;

/** Why the Cargo manifest `path` (text `text`) is a build-automation tool, or null. */
export function cargoToolReason(path: string, text: string): string | null {
  const doc = readToml(text);
  const name = tomlText(
    doc.assignments.find(
      (a) => a.path.length === 2 && a.path[0] === 'package' && a.path[1] === 'name',
    )?.value,
  );
  if (name && XTASK.test(name))
    return `${path} is the workspace's cargo-xtask package (build automation run by \`cargo xtask\`)`;
  return null;
}
