/**
 * Cloud Run services a shell script deploys (docs/decisions.md, "`gcloud run deploy` in a
 * script declares a Cloud Run service"). A sample or a small system often deploys with a setup
 * script rather than manifests: `gcloud run deploy <name> --image <image> | --source <folder>
 * --set-env-vars|--update-env-vars K=V,...` (also `gcloud run services update <name>` for its
 * environment), and reads another service's address from
 * `URL=$(gcloud run services describe <name> --format 'value(status.url)')`.
 *
 * Pure text reading, no shell run: backslash continuations are joined and quotes dropped (so a
 * command passed as a quoted argument, `retry "gcloud run deploy api ..."`, still reads), one
 * logical line per command. A name or folder still holding a variable (`deploy ${SERVICE}`) names
 * nothing.
 */
import { LineIndex } from '../shared/text';

/** One `gcloud run deploy` / `gcloud run services update` of a script. */
export interface RunDeploy {
  name: string;
  /** True for `deploy` (declares the service), false for `services update` (environment only). */
  declares: boolean;
  /** `--source <folder>` as written. */
  source: string | null;
  /** `--image <ref>` as written. */
  image: string | null;
  /** `--set-env-vars` / `--update-env-vars` entries, in order. */
  env: Array<{ name: string; value: string }>;
  line: number;
  endLine: number;
}

/** What a script says about Cloud Run. */
export interface RunScript {
  deploys: RunDeploy[];
  /** Variable name -> the Cloud Run service whose URL it holds (`services describe`). */
  urlVars: Map<string, string>;
  /** Image repository (no tag) -> the folder a build in the script builds it from. */
  builtFrom: Map<string, string>;
}

const NAME = /^[a-z0-9][a-z0-9-]*$/i;
const DESCRIBE =
  /\b([A-Za-z_]\w*)=["']?\$\(\s*gcloud\s+(?:(?:alpha|beta)\s+)?run\s+services\s+describe\s+([A-Za-z0-9][\w-]*)[^)]*?value\(status\.url\)/g;
const DEPLOY = /\bgcloud\s+(?:(?:alpha|beta)\s+)?run\s+(deploy|services\s+update)\s/g;
const BUILD = /\b(?:gcloud\s+builds\s+submit|docker\s+(?:buildx\s+)?build|podman\s+build)\s/g;
const STOP = new Set([';', '&&', '||', '|', '&', ')']);
const ENV_FLAGS = new Set(['--set-env-vars', '--update-env-vars']);
/** gcloud flags of these commands that take no value. */
const BOOLEAN_FLAG =
  /^--(no-)?(allow-unauthenticated|async|quiet|no-traffic|use-http2|cpu-boost|cpu-throttling|default-url|invoker-iam-check|session-affinity|clear-[\w-]+|remove-[\w-]+|pull|push|load|rm|no-cache|help)$|^-q$/;

/** Backslash-newline joined to spaces, same length (offsets keep their lines). */
function joinContinuations(text: string): string {
  return text.replace(/\\(\r?)\n/g, (_m, cr: string) => ` ${cr ? ' ' : ''}\v`);
}

/** The words of one logical command from `at` to its end (quotes dropped). */
function wordsFrom(text: string, at: number): { words: string[]; end: number } {
  let end = text.indexOf('\n', at);
  if (end < 0) end = text.length;
  const words: string[] = [];
  for (const raw of text
    .slice(at, end)
    .replace(/["']/g, ' ')
    .split(/[ \t\v\r]+/)) {
    if (raw === '' || raw.startsWith('#')) {
      if (raw.startsWith('#')) break;
      continue;
    }
    if (STOP.has(raw)) break;
    const word = raw.replace(/[;)]+$/, '');
    if (word !== '') words.push(word);
    if (word !== raw) break;
  }
  return { words, end };
}

/** `--flag=value` / `--flag value` pairs and positional words of a command's arguments. */
function parseWords(words: string[]): { flags: Array<[string, string]>; positional: string[] } {
  const flags: Array<[string, string]> = [];
  const positional: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('-')) {
      positional.push(w);
      continue;
    }
    const eq = w.indexOf('=');
    if (eq > 0) flags.push([w.slice(0, eq), w.slice(eq + 1)]);
    else if (!BOOLEAN_FLAG.test(w) && i + 1 < words.length && !words[i + 1]!.startsWith('-'))
      flags.push([w, words[++i]!]);
    else flags.push([w, '']);
  }
  return { flags, positional };
}

/** `K=V,K2=V2` (or gcloud's `^;^K=V;K2=V2` custom delimiter) as entries. */
export function envEntries(list: string): Array<{ name: string; value: string }> {
  let sep = ',';
  let body = list;
  const custom = /^\^([^^]+)\^/.exec(list);
  if (custom) {
    sep = custom[1]!;
    body = list.slice(custom[0].length);
  }
  return body
    .split(sep)
    .map(
      (kv) =>
        kv.indexOf('=') > 0 && {
          name: kv.slice(0, kv.indexOf('=')),
          value: kv.slice(kv.indexOf('=') + 1),
        },
    )
    .filter(
      (x): x is { name: string; value: string } => x !== false && /^[A-Za-z_]\w*$/.test(x.name),
    );
}

/** An image reference without its tag or digest. */
export function imageRepo(ref: string): string {
  const noDigest = ref.split('@')[0] ?? ref;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return (colon > slash ? noDigest.slice(0, colon) : noDigest).toLowerCase();
}

/**
 * Reads a shell script's Cloud Run deploys, the variables holding a service's URL and the
 * images it builds from a folder; used to declare the services and join their environment to
 * the code that reads it.
 */
export function readRunScript(text: string): RunScript {
  if (!/\bgcloud\b/.test(text)) return { deploys: [], urlVars: new Map(), builtFrom: new Map() };
  const joined = joinContinuations(text);
  const lines = new LineIndex(text);
  const urlVars = new Map<string, string>();
  for (const m of joined.matchAll(DESCRIBE)) urlVars.set(m[1]!, m[2]!);
  const builtFrom = new Map<string, string>();
  for (const m of joined.matchAll(BUILD)) {
    const { words } = wordsFrom(joined, (m.index ?? 0) + m[0].length);
    const { flags, positional } = parseWords(words);
    const tags = flags.filter(([f]) => f === '--tag' || f === '-t').map(([, v]) => v);
    const folder = positional[0] ?? '.';
    for (const tag of tags) if (tag && !folder.includes('$')) builtFrom.set(imageRepo(tag), folder);
  }
  const deploys: RunDeploy[] = [];
  for (const m of joined.matchAll(DEPLOY)) {
    const at = m.index ?? 0;
    const { words, end } = wordsFrom(joined, at + m[0].length);
    const { flags, positional } = parseWords(words);
    const name = positional[0];
    if (!name || !NAME.test(name)) continue;
    const value = (f: string) => flags.find(([k]) => k === f)?.[1] || null;
    deploys.push({
      name: name.toLowerCase(),
      declares: m[1] === 'deploy',
      source: value('--source'),
      image: value('--image'),
      env: flags.filter(([k]) => ENV_FLAGS.has(k)).flatMap(([, v]) => envEntries(v)),
      line: lines.lineAt(at),
      endLine: lines.lineAt(Math.max(at, end - 1)),
    });
  }
  return { deploys, urlVars, builtFrom };
}

/** The variables a value reads (`$NAME`, `${NAME}`, `${NAME:-x}`). */
export function variablesOf(value: string): string[] {
  return [...value.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1]!);
}

/**
 * A resource name with its variable parts dropped (`${PROJECT}-sessions` -> `sessions`), or
 * null when nothing literal is left.
 */
export function literalPart(value: string): string | null {
  const name = value
    .replace(/^gs:\/\//, '')
    .replace(/\$\([^)]*\)|\$\{[^}]*\}|\$[A-Za-z_]\w*/g, '')
    .replace(/^[-_.]+|[-_.]+$/g, '')
    .replace(/[-_.]{2,}/g, '-');
  return /^[A-Za-z0-9][\w.-]*$/.test(name) ? name : null;
}
