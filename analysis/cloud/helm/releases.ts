/**
 * The release name a repository installs a chart under, from what deploys it: a helmfile
 * `releases:` entry (`name:` with `chart:`), a Terraform `helm_release` (`name =` with `chart =`),
 * or a `helm install|upgrade [--install] NAME CHART` command in a script, pipeline or README.
 * Resource names are made from the release name, so the graph names what is really deployed.
 * Regular expressions over text, linear: these are hints, never required.
 */
import type { SourceFile } from '../../evidence';
import { basename, dirname, joinPath } from '../../shared/paths';

const HELM_CMD = /\bhelm\s+(?:upgrade\s+(?:--install|-i)|install)\s+([^\n]{0,300})/g;
/** Options of `helm install|upgrade` that take a value as the next word. */
const WITH_VALUE = new Set([
  '-n',
  '--namespace',
  '-f',
  '--values',
  '--set',
  '--set-string',
  '--version',
  '--kube-context',
  '--timeout',
  '--repo',
  '--set-file',
  '--post-renderer',
]);

/** The release and chart of a `helm install|upgrade --install` command's arguments. */
function positional(rest: string): [string, string] | null {
  const words = rest.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < words.length && out.length < 2; i++) {
    const w = words[i]!;
    if (w === '\\') continue;
    if (w.startsWith('-')) {
      if (WITH_VALUE.has(w)) i++;
      continue;
    }
    out.push(w);
  }
  const [release, chart] = out;
  return release && chart && /^[a-z0-9][a-z0-9.-]*$/.test(release) ? [release, chart] : null;
}
const TF_RELEASE = /resource\s+"helm_release"\s+"[^"]+"\s*\{([^}]*)\}/g;
const HELMFILE_ENTRY =
  /-\s+name:\s*["']?([a-z0-9][a-z0-9.-]*)["']?\s*\n(?:[ \t]+[^\n]*\n){0,8}?[ \t]+chart:\s*["']?([^\s"']+)/g;

/** Does a chart reference written in `file` name the chart in `dir` called `name`? */
function refersTo(file: SourceFile, ref: string, dir: string, name: string): boolean {
  const clean = ref.replace(/^["']|["']$/g, '').replace(/\/$/, '');
  if (/^(oci|https?):\/\//.test(clean) || !clean.startsWith('.'))
    if (basename(clean).replace(/:[^:]*$/, '') === name) return true;
  // Relative to the file (helmfile, Terraform) or to the repository root (a command run there).
  return joinPath(dirname(file.path), clean) === dir || joinPath('', clean) === dir;
}

/** Release names by chart folder, for the charts of `charts` (folder -> Chart.yaml name). */
export function releaseNames(
  charts: Map<string, string>,
  files: SourceFile[],
): Map<string, string> {
  const out = new Map<string, string>();
  const found = (file: SourceFile, release: string, ref: string) => {
    for (const [dir, name] of charts)
      if (!out.has(dir) && refersTo(file, ref, dir, name)) out.set(dir, release);
  };
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const text = file.text;
    if (!/helm/i.test(text) && !/releases\s*:/.test(text)) continue;
    for (const m of text.matchAll(HELM_CMD)) {
      const p = positional(m[1]!);
      if (p) found(file, p[0], p[1]);
    }
    if (/\.tf$/.test(file.path)) {
      for (const m of text.matchAll(TF_RELEASE)) {
        const name = /\bname\s*=\s*"([a-z0-9][a-z0-9.-]*)"/.exec(m[1]!)?.[1];
        const chart = /\bchart\s*=\s*"([^"$]+)"/.exec(m[1]!)?.[1];
        if (name && chart) found(file, name, chart);
      }
    }
    if (/(^|\/)helmfile[^/]*\.ya?ml(\.gotmpl)?$/.test(file.path))
      for (const m of text.matchAll(HELMFILE_ENTRY)) found(file, m[1]!, m[2]!);
  }
  return out;
}
