/**
 * What a repository says it deploys, outside its CI (docs/decisions.md, "The primary variant from
 * evidence"): the commands of the root README's code (fenced blocks, `$ ` prompts, inline code
 * spans), of a Makefile's recipes and of deploy scripts (`deploy-staging.sh`, a script in a
 * `k8s/` or `helm/` folder). `kubectl apply -f|-k`, `docker compose [-f ...] up|run|start` and
 * `helm upgrade --install <release> <chart>` each become a `deploy-manifests` record naming the
 * paths it deploys (relative to the document's folder when that path exists, else to the root;
 * a path that names nothing of the repository, like a remote chart, makes no record),
 * which the variant chooser (analysis/variants.ts) takes as the deployed variant, and the Helm
 * analyzer's deployers (helm/deployers.ts) as the release name and values of a chart. Pure.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, isWithin, joinPath } from '../shared/paths';
import { scanScript } from '../cicd/commands';
import { flagAll, flag, parseArgs, splitCommands } from '../cicd/shell';

export type DocumentKind = 'readme' | 'makefile' | 'script';

const README = /^README(\.(md|markdown|rst|txt))?$/i;
const MAKEFILE = /(^|\/)(GNUmakefile|[Mm]akefile)$/;
const SCRIPT =
  /(^|\/)(k8s|kubernetes|helm|charts|deploy|deployment|deployments|manifests)\/(.+\/)?[^/]+\.(sh|bash|ps1)$|(^|\/)(deploy|install)[\w.-]*\.(sh|bash|ps1)$|(^|\/)[\w.-]*compose[\w.-]*\.(sh|bash|ps1)$/i;

/** Which kind of deploy document a path is: the root README, a Makefile, a deploy script. */
export function deployDocumentKind(path: string): DocumentKind | null {
  if (README.test(path)) return 'readme';
  if (MAKEFILE.test(path)) return 'makefile';
  if (SCRIPT.test(path)) return 'script';
  return null;
}

const TOOLS = /\b(kubectl|oc|helm|docker|docker-compose|podman|podman-compose)\b/;

/** `NAME = value` (`:=`, `::=`, `?=`, `+=`, an `export` before it) outside recipes. */
const MAKE_ASSIGN = /^(?:export\s+)?([A-Za-z_][\w.-]*)\s*(\?=|\+=|:{0,3}=)\s*(.*)$/;
/** A line expanded no longer than this, whatever its variables (nested references double). */
const MAKE_MAX_LINE = 4096;

/** A Makefile's variables, as written (first `?=` wins, `+=` appends); recipes are skipped. */
function makeVariables(lines: string[]): Map<string, string> {
  const vars = new Map<string, string>();
  for (const l of lines) {
    if (l.startsWith('\t')) continue;
    const m = MAKE_ASSIGN.exec(l);
    if (!m) continue;
    const [, name, op, value = ''] = m;
    const known = vars.get(name!);
    if (op === '?=' && known !== undefined) continue;
    vars.set(name!, op === '+=' && known !== undefined ? `${known} ${value}` : value);
  }
  return vars;
}

/**
 * A recipe line with its `$(NAME)` / `${NAME}` references to the Makefile's own variables
 * replaced, as make does before running it (`$(DOCKER_COMPOSE_CMD) $(DOCKER_COMPOSE_FILES) up`).
 * Unknown names and functions (`$(shell ...)`) are left as written; depth and length are bounded.
 */
function expandMake(line: string, vars: Map<string, string>): string {
  if (vars.size === 0) return line;
  let out = line;
  for (let depth = 0; depth < 8 && out.includes('$'); depth++) {
    const next = out.replace(
      /\$[({]([A-Za-z_][\w.-]*)[)}]/g,
      (whole, name: string) => vars.get(name) ?? whole,
    );
    if (next === out || next.length > MAKE_MAX_LINE) break;
    out = next;
  }
  return out;
}

/** The document's command text, line for line (other lines blank, so lines keep their numbers). */
function commandText(file: SourceFile, kind: DocumentKind): string {
  const lines = file.text.split(/\r?\n/);
  if (kind === 'script') return lines.join('\n');
  if (kind === 'makefile') {
    const vars = makeVariables(lines);
    return lines
      .map((l) => (l.startsWith('\t') ? expandMake(l.replace(/^\t[@+-]*/, ''), vars) : ''))
      .join('\n');
  }
  let fence: string | null = null;
  return lines
    .map((l) => {
      const open = /^\s*(```+|~~~+)/.exec(l);
      if (open) {
        if (fence === null) fence = open[1]!.slice(0, 3);
        else if (open[1]!.startsWith(fence)) fence = null;
        return '';
      }
      const prompt = /^\s*[$>]\s+(.*)$/.exec(l);
      if (fence !== null) {
        const cmd = prompt ? prompt[1]! : l.trim();
        return cmd.startsWith('#') ? '' : cmd;
      }
      // Outside a fence `> ` opens a Markdown blockquote (prose, its `Docker's` no quote to
      // open): only a `$ ` prompt is a command there.
      if (prompt && l.trimStart().startsWith('$') && TOOLS.test(prompt[1]!)) return prompt[1]!;
      // Inline code spans of prose: `kubectl apply -f ./manifests`.
      const spans = [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((s) => TOOLS.test(s));
      return spans.join(' ; ');
    })
    .join('\n');
}

/** One deploy command: the paths it deploys and, for Helm, the release. */
export interface DeployCommand {
  tool: 'kubectl' | 'docker-compose' | 'helm';
  line: number;
  manifests?: string[];
  kustomize?: string;
  compose_files?: string[];
  /** `docker compose up` without `-f`: the files are Compose's defaults of `project_dir`. */
  project_dir?: string;
  chart?: string;
  release?: string;
  values?: string[];
  sets?: Array<{ name: string; value: string }>;
  command: string;
}

const COMPOSE_VALUE_FLAGS = new Set([
  ...['-f', '--file', '-p', '--project-name', '--project-directory', '--profile', '--env-file'],
  ...['--ansi', '--progress', '--parallel'],
]);
const COMPOSE_DEPLOYS = new Set(['up', 'run', 'start', 'create', 'deploy']);
const DEFAULT_COMPOSE = [
  'compose.yaml',
  'compose.yml',
  'docker-compose.yml',
  'docker-compose.yaml',
];
const HELM_VALUE_FLAGS = new Set([
  ...['-f', '--values', '-n', '--namespace', '--set', '--set-string', '--version', '--timeout'],
  ...['--kube-context', '--kubeconfig', '--repo', '--description', '--history-max'],
  ...['--set-file', '--set-json', '--post-renderer', '-o', '--output'],
]);

/** Every deploy command of a deploy document, in order. */
export function deployCommands(file: SourceFile): DeployCommand[] {
  const kind = deployDocumentKind(file.path);
  if (!kind) return [];
  const text = commandText(file, kind);
  const out: DeployCommand[] = [];
  for (const op of scanScript(text)) {
    if (op.kind !== 'deploy' || op.tool !== 'kubectl') continue;
    const d = op.detail ?? {};
    const manifests = Array.isArray(d.manifests) ? d.manifests.map(String) : [];
    const kustomize = typeof d.kustomize === 'string' ? d.kustomize : undefined;
    if (!manifests.length && !kustomize) continue;
    out.push({
      tool: 'kubectl',
      line: op.line + 1,
      ...(manifests.length ? { manifests } : {}),
      ...(kustomize ? { kustomize } : {}),
      command: `kubectl ${op.action}`,
    });
  }
  for (const cmd of splitCommands(text)) {
    const w = cmd.words.filter((x) => !/^[A-Za-z_]\w*=/.test(x) && x !== 'sudo');
    const head = basename(w[0] ?? '');
    const line = cmd.line + 1;
    const shown = w.join(' ').slice(0, 200);
    let args: string[] | null = null;
    if (head === 'docker-compose' || head === 'podman-compose') args = w.slice(1);
    else if ((head === 'docker' || head === 'podman') && w[1] === 'compose') args = w.slice(2);
    if (args) {
      const a = parseArgs(args, COMPOSE_VALUE_FLAGS);
      if (!COMPOSE_DEPLOYS.has(a.positional[0] ?? '')) continue;
      const dir = flag(a, '--project-directory') ?? '.';
      const files = flagAll(a, '-f', '--file');
      out.push({
        tool: 'docker-compose',
        line,
        compose_files: files.length ? files : DEFAULT_COMPOSE.map((f) => `${dir}/${f}`),
        ...(files.length ? {} : { project_dir: dir }),
        command: shown,
      });
      continue;
    }
    if (head !== 'helm') continue;
    const a = parseArgs(w.slice(1), HELM_VALUE_FLAGS);
    const [verb, release, chart] = a.positional;
    if ((verb !== 'upgrade' && verb !== 'install') || !release || !chart) continue;
    if (a.flags.has('--generate-name')) continue;
    const sets = flagAll(a, '--set', '--set-string')
      .flatMap((s) => s.split(','))
      .map((s) => /^([^=]+)=(.*)$/.exec(s))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ name: m[1]!, value: m[2]! }));
    out.push({
      tool: 'helm',
      line,
      release,
      chart,
      values: flagAll(a, '-f', '--values'),
      sets,
      command: shown,
    });
  }
  return out.sort((x, y) => x.line - y.line);
}

/**
 * A path a command names, resolved: relative to the document's folder when something of the
 * repository is there, else to the root (a README run from the root, a script run from anywhere).
 */
export function resolveFrom(
  file: SourceFile,
  ref: string,
  exists: (path: string) => boolean,
): string | null {
  const clean = ref.replace(/^file:\/\//, '');
  const local = joinPath(dirname(file.path), clean);
  if (local !== null && exists(local)) return local;
  const root = joinPath('', clean);
  return root !== null && exists(root) ? root : null;
}

/**
 * The files `docker compose up` reads without `-f` when the project folder's `.env` sets
 * `COMPOSE_FILE` (Compose's documentation, "Set environment variables" > `COMPOSE_FILE`: a list
 * separated by `COMPOSE_PATH_SEPARATOR`, `:` on Linux and macOS), relative to that folder; null
 * when it does not (Compose's own default files then).
 */
function composeFileVariable(
  doc: SourceFile,
  projectDir: string,
  byPath: Map<string, SourceFile>,
): string[] | null {
  for (const base of [dirname(doc.path), '']) {
    const dir = joinPath(base, projectDir);
    if (dir === null) continue;
    const env = byPath.get(joinPath(dir, '.env') ?? '');
    if (!env) continue;
    const value = /^[ \t]*COMPOSE_FILE[ \t]*=[ \t]*["']?([^"'\r\n#]*)/m.exec(env.text)?.[1]?.trim();
    if (!value) return null;
    const sep =
      /^[ \t]*COMPOSE_PATH_SEPARATOR[ \t]*=[ \t]*["']?([^"'\s#]+)/m.exec(env.text)?.[1] ?? ':';
    return value
      .split(sep)
      .map((f) => joinPath(dir, f.trim()))
      .filter((p): p is string => p !== null && p !== dir);
  }
  return null;
}

/** `deploy-manifests` records of the deploy documents among `docs`; `all` are the audit's files. */
export function analyzeDeployDocuments(docs: SourceFile[], all: SourceFile[]): AnalyzerOutput {
  const paths = all.map((f) => f.path);
  const exists = (p: string) => {
    const cut = p.split(/[*?{[]/)[0]!.replace(/\/$/, '');
    return paths.some((x) => isWithin(x, cut));
  };
  const byPath = new Map(all.map((f) => [f.path, f]));
  const out: Evidence[] = [];
  for (const file of docs) {
    const kind = deployDocumentKind(file.path);
    if (!kind) continue;
    for (const c of deployCommands(file)) {
      const at = (refs: string[]) =>
        refs.map((r) => resolveFrom(file, r, exists)).filter((p): p is string => p !== null);
      let attributes: Record<string, unknown>;
      if (c.tool === 'kubectl')
        attributes = {
          ...(c.manifests ? { manifests: at(c.manifests) } : {}),
          ...(c.kustomize ? { kustomize: at([c.kustomize])[0] } : {}),
        };
      else if (c.tool === 'docker-compose') {
        const fromEnv =
          c.project_dir === undefined ? null : composeFileVariable(file, c.project_dir, byPath);
        const named = (fromEnv ?? at(c.compose_files ?? [])).filter((p) => paths.includes(p));
        if (!named.length) continue;
        attributes = { compose_file: named[0], compose_files: named };
      } else {
        const chart = at([c.chart!])[0];
        if (!chart) continue;
        attributes = { chart, release: c.release };
      }
      out.push(
        evidence(
          file,
          { start: c.line, end: c.line },
          {
            source: 'cloud',
            provider: 'deploy-documents',
            kind: 'deploy-manifests',
            subject: entityKey('tool', c.tool),
            summary: `${file.path} line ${c.line} deploys with \`${c.command}\``,
            attributes: { tool: c.tool, documented_in: kind, command: c.command, ...attributes },
          },
        ),
      );
    }
  }
  return { evidence: out, gaps: [] };
}
