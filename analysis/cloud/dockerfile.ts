/**
 * Dockerfiles: base images per stage, and for the final stage the exposed ports, the user it runs
 * as, its healthcheck and ADDs of remote URLs.
 */
import { entityKey, type AnalyzerOutput, type Evidence, type SourceFile } from '../evidence';
import { evidence, related, type Span } from '../shared/evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { basename, dirname, joinPath } from '../shared/paths';
import { isSecretName, looksLikeSecretValue } from '../shared/secrets';
import { expandVariables } from '../shared/variables';
import { classifyImage, isServerSetting, redact } from './common';

const PROVIDER = 'dockerfile';

interface Instruction {
  cmd: string;
  args: string;
  start: number;
  end: number;
}

/** Logical instructions with their line spans: continuations joined, comments and heredoc bodies skipped. */
export function instructions(text: string): Instruction[] {
  const lines = text.split('\n');
  const out: Instruction[] = [];
  let escape = '\\';
  let seenInstruction = false;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\r$/, '');
    const directive = /^#\s*escape\s*=\s*(\S)/i.exec(line);
    if (!seenInstruction && directive) escape = directive[1] ?? '\\';
    if (/^\s*(#.*)?$/.test(line)) continue;
    seenInstruction = true;
    const start = i + 1;
    let body = line;
    while (body.trimEnd().endsWith(escape) && i + 1 < lines.length) {
      body = body.trimEnd().slice(0, -1);
      i++;
      const next = (lines[i] ?? '').replace(/\r$/, '');
      if (/^\s*#/.test(next)) continue;
      body += ` ${next.trim()}`;
    }
    const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(body);
    if (!m) continue;
    const heredoc = /<<-?\s*["']?([A-Za-z_][\w]*)["']?/.exec(m[2] ?? '');
    if (heredoc) {
      while (i + 1 < lines.length && (lines[i + 1] ?? '').trim() !== heredoc[1]) i++;
      if (i + 1 < lines.length) i++;
    }
    out.push({ cmd: (m[1] ?? '').toUpperCase(), args: (m[2] ?? '').trim(), start, end: i + 1 });
  }
  return out;
}

interface Stage {
  name: string | null;
  image: string;
  from: Instruction;
  body: Instruction[];
}

function stages(list: Instruction[]): Stage[] {
  const globalArgs = new Map<string, string>();
  const out: Stage[] = [];
  for (const ins of list) {
    if (ins.cmd === 'ARG' && out.length === 0) {
      const [k, ...v] = ins.args.split('=');
      if (k && v.length > 0) globalArgs.set(k.trim(), v.join('=').replace(/^["']|["']$/g, ''));
    } else if (ins.cmd === 'FROM') {
      const tokens = ins.args.split(/\s+/).filter((t) => !t.startsWith('--'));
      const asIdx = tokens.findIndex((t) => t.toUpperCase() === 'AS');
      out.push({
        name: asIdx >= 0 ? (tokens[asIdx + 1] ?? null) : null,
        image: expandVariables(tokens[0] ?? '', (n) => globalArgs.get(n)),
        from: ins,
        body: [],
      });
    } else out[out.length - 1]?.body.push(ins);
  }
  return out;
}

/** The stages `stage` builds on, oldest first, ending with `stage` itself. */
function lineage(stage: Stage, all: Stage[]): Stage[] {
  const chain = [stage];
  let cur = stage;
  for (let guard = 0; guard < all.length; guard++) {
    const parent = all.find((s) => s !== cur && s.name?.toLowerCase() === cur.image.toLowerCase());
    if (!parent || chain.includes(parent)) break;
    chain.unshift(parent);
    cur = parent;
  }
  return chain;
}

/** The image the final stage is built on, through `FROM <earlier stage>`; null without FROM. */
export function finalBaseImage(text: string): string | null {
  const all = stages(instructions(text));
  const final = all[all.length - 1];
  return final ? (lineage(final, all)[0]?.image ?? null) : null;
}

/** Layout folders that hold a service's sources but do not name it (`src/cartservice/src`). */
const LAYOUT_DIRS = new Set(['src', 'source', 'sources', 'app', 'docker', 'build', 'code']);

/** The Maven/Gradle main source set, directly under `src`. */
const SOURCE_SETS = new Set(['main']);

/**
 * Service name for a Dockerfile: its directory (the nearest one that is not a layout folder such
 * as `src` or `docker`), or at the repository root the final stage's name.
 */
export function dockerfileServiceName(path: string, finalStage: string | null): string {
  const dir = dirname(path);
  if (dir) {
    const segments = dir.split('/');
    // The Maven/Gradle layout (`rest-heroes/src/main/docker/Dockerfile.jvm`): `main` under `src`
    // is a layout folder too.
    const layout = (s: string, i: number) =>
      LAYOUT_DIRS.has(s.toLowerCase()) ||
      (SOURCE_SETS.has(s.toLowerCase()) && segments[i - 1]?.toLowerCase() === 'src');
    const named = segments
      .map((s, i) => ({ s, i }))
      .reverse()
      .find(({ s, i }) => !layout(s, i))?.s;
    return named ?? segments[segments.length - 1]!;
  }
  const variant = /^(?:Dockerfile|Containerfile)[.-](.+)$|^(.+)\.dockerfile$/i.exec(basename(path));
  return finalStage ?? variant?.[1] ?? variant?.[2] ?? 'root';
}

export function analyzeDockerfile(file: SourceFile): AnalyzerOutput {
  const list = instructions(file.text);
  const all = stages(list);
  const final = all[all.length - 1];
  if (!final) {
    return {
      evidence: [],
      gaps: [
        {
          path: file.path,
          reason: 'dockerfile_no_from',
          message: 'Dockerfile has no FROM instruction',
        },
      ],
    };
  }
  const name = dockerfileServiceName(file.path, final.name);
  const subject = entityKey('service', name);
  const out: Evidence[] = [];
  const emit = (
    span: Span,
    kind: string,
    summary: string,
    attributes: Record<string, unknown>,
    rel?: [string, string | null],
  ) =>
    out.push(
      evidence(file, span, {
        source: 'cloud',
        provider: PROVIDER,
        kind,
        subject,
        summary,
        attributes,
        ...related(rel),
      }),
    );
  const stageNames = new Set(all.map((s) => s.name?.toLowerCase()).filter(Boolean));
  all.forEach((s, i) => {
    if (s.image === 'scratch' || stageNames.has(s.image.toLowerCase())) return;
    const image = parseImageRef(s.image);
    if (!image) return;
    const isFinal = i === all.length - 1;
    emit(
      { start: s.from.start, end: s.from.end },
      'image-reference',
      `Dockerfile for ${name} builds ${isFinal ? 'its final stage' : `stage ${s.name ?? i}`} from ${s.image}`,
      { ...imageAttributes(image), stage: s.name, stage_index: i, final_stage: isFinal },
      ['built_from', imageKey(image)],
    );
  });

  // A stage built FROM an earlier stage inherits its USER, HEALTHCHECK and EXPOSE.
  const chain = lineage(final, all);
  const inherited = chain.flatMap((s) => s.body);
  const root0 = chain[0] ?? final;
  const users = inherited.filter((x) => x.cmd === 'USER');
  const lastUser = users[users.length - 1];
  const user = lastUser ? (lastUser.args.split(':')[0] ?? '') : null;
  const root = user === null || user === '0' || user === 'root';
  const health = inherited.filter((x) => x.cmd === 'HEALTHCHECK').pop();
  const ports = inherited
    .filter((x) => x.cmd === 'EXPOSE')
    .flatMap((x) =>
      x.args
        .split(/\s+/)
        .filter(Boolean)
        .map((p) => ({ ins: x, p })),
    );
  const remote = all
    .flatMap((s) => s.body)
    .filter((x) => x.cmd === 'ADD' && /(^|\s)(https?:\/\/|git@)/.test(x.args));
  // A build argument with no default naming the folder built (`WORKDIR /src/app/${APP_PATH}`,
  // `COPY --from=builder /src/app/${APP_PATH}/bin /app`): one recipe for several programs.
  const noDefault = list
    .filter((x) => x.cmd === 'ARG' && !x.args.includes('='))
    .map((x) => x.args.trim())
    .filter((n) => /^[A-Za-z_]\w*$/.test(n));
  const programArg =
    noDefault.find((n) =>
      list.some(
        (x) =>
          (x.cmd === 'WORKDIR' || x.cmd === 'COPY') &&
          new RegExp(String.raw`\$(?:\{${n}\}|${n}\b)`).test(x.args),
      ),
    ) ?? null;
  // The program the image runs: the last ENTRYPOINT and CMD of the final stage's lineage.
  const program = (cmd: string) => inherited.filter((x) => x.cmd === cmd).pop()?.args ?? null;
  const lastLine = Math.max(final.from.end, ...final.body.map((x) => x.end));
  emit(
    { start: final.from.start, end: lastLine },
    'dockerfile-declared',
    `${file.path} builds service ${name} from ${final.image}`,
    {
      context_dir: dirname(file.path),
      dockerfile: file.path,
      stages: all.map((s) => ({ name: s.name, image: s.image })),
      final_stage: final.name,
      base_image: root0.image,
      base_stage: chain.length > 1 ? final.image : null,
      entrypoint: program('ENTRYPOINT'),
      cmd: program('CMD'),
      user,
      runs_as_root: root,
      healthcheck: health ? !/^NONE\b/i.test(health.args) : false,
      exposed_ports: ports.map((x) => x.p),
      remote_adds: remote.length,
      copied_dirs: copiedDirs(dirname(file.path), inherited),
      copied_files: copiedFiles(dirname(file.path), inherited),
      program_arg: programArg,
    },
  );
  if (root) {
    const at = lastUser ?? final.from;
    emit(
      { start: at.start, end: at.end },
      'runs-as-root',
      lastUser
        ? `Dockerfile for ${name} runs as root (USER ${user})`
        : `Dockerfile for ${name} sets no USER, so it runs as root`,
      { user, reason: lastUser ? 'root user' : 'no USER instruction' },
    );
  } else if (lastUser) {
    emit(
      { start: lastUser.start, end: lastUser.end },
      'user-declared',
      `Dockerfile for ${name} runs as user ${user}`,
      {
        user,
        runs_as_root: false,
      },
    );
  }
  if (health) {
    const disabled = /^NONE\b/i.test(health.args);
    emit(
      { start: health.start, end: health.end },
      'healthcheck-declared',
      `Dockerfile for ${name} ${disabled ? 'disables' : 'declares'} a healthcheck`,
      { disabled },
    );
  }
  for (const { ins, p } of ports) {
    const [port = '', protocol = 'tcp'] = p.split('/');
    emit(
      { start: ins.start, end: ins.end },
      'port-exposed',
      `Dockerfile for ${name} exposes port ${p}`,
      {
        mapping: port,
        target: port,
        published: null,
        protocol,
        public: false,
        declared_only: true,
      },
    );
  }
  for (const ins of remote) {
    const url = ins.args.split(/\s+/).find((t) => /^(https?:\/\/|git@)/.test(t)) ?? '';
    const safe = redact(url).replace(/\?.*$/, '');
    emit(
      { start: ins.start, end: ins.end },
      'remote-add',
      `Dockerfile for ${name} ADDs remote ${safe}`,
      {
        url: safe,
        checksum: /--checksum=/.test(ins.args),
      },
    );
  }
  // ENV of the final stage (and the stages it is built FROM): the value the service's
  // environment has unless its deployment sets the variable (reconcile decides which wins).
  // On a database image, its own server settings (`MYSQL_USER=shipping`) name no host.
  const engine = classifyImage(parseImageRef(root0.image))?.engine;
  const vars = new Map<string, string>();
  for (const ins of inherited.filter((x) => x.cmd === 'ENV')) {
    for (const [variable, written] of envPairs(ins.args)) {
      const value = expandVariables(written, (n) => vars.get(n));
      vars.set(variable, value);
      if (value === '' || value.includes('$') || isSecretName(variable)) continue;
      if (engine && isServerSetting(engine, variable)) continue;
      if (looksLikeSecretValue(value)) continue;
      emit(
        { start: ins.start, end: ins.end },
        'env-default',
        `Dockerfile for ${name} sets ENV ${variable}=${redact(value)}`,
        { variable, default: redact(value), source: 'dockerfile-env' },
      );
    }
  }
  return { evidence: out, gaps: [] };
}

/**
 * The folders of the build context the final stage copies in (`COPY html/ /var/www/html` from
 * `ratings/` is `ratings/html`): not from another stage, no wildcard, not the context itself.
 */
export function copiedDirs(context: string, body: Array<{ cmd: string; args: string }>): string[] {
  const out = new Set<string>();
  for (const ins of body) {
    if ((ins.cmd !== 'COPY' && ins.cmd !== 'ADD') || /--from=/i.test(ins.args)) continue;
    const args = ins.args.split(/\s+/).filter((a) => a !== '' && !a.startsWith('--'));
    for (const src of args.slice(0, -1)) {
      const rel = src.replace(/^\.\//, '').replace(/\/+$/, '');
      if (rel === '' || rel === '.' || /[*?[$]/.test(rel) || rel.startsWith('..')) continue;
      if (/^(https?:|git@)/.test(rel)) continue;
      const dir = joinPath(context, rel);
      if (dir !== null) out.add(dir);
    }
  }
  return [...out].sort();
}

/**
 * The built files of the build context the final stage copies in by name or by wildcard
 * (`COPY target/jars/helper* /opt/helper.jar` from `base/` is `base/target/jars/helper*`): a
 * source whose last segment holds a wildcard or names a JVM archive (`.jar`, `.war`, `.ear`), not
 * from another stage, not a URL. The identity rule of copied artifacts
 * (analysis/reconcile-copied-artifacts.ts) matches them to the modules that build such files.
 */
export function copiedFiles(context: string, body: Array<{ cmd: string; args: string }>): string[] {
  const out = new Set<string>();
  for (const ins of body) {
    if ((ins.cmd !== 'COPY' && ins.cmd !== 'ADD') || /--from=/i.test(ins.args)) continue;
    const args = ins.args.split(/\s+/).filter((a) => a !== '' && !a.startsWith('--'));
    for (const src of args.slice(0, -1)) {
      const rel = src.replace(/^\.\//, '');
      if (/^(https?:|git@)/.test(rel) || rel.includes('$') || rel.startsWith('..')) continue;
      const last = rel.slice(rel.lastIndexOf('/') + 1);
      if (!/[*?]/.test(last) && !/\.(jar|war|ear)$/i.test(last)) continue;
      const path = joinPath(context, rel);
      if (path !== null) out.add(path);
    }
  }
  return [...out].sort();
}

/** `ENV A=1 B="two words"` and the legacy `ENV A value with spaces`. */
function envPairs(args: string): Array<[string, string]> {
  const legacy = /^([A-Za-z_][A-Za-z0-9_]*)\s+([^=]*)$/.exec(args.trim());
  if (legacy) return [[legacy[1]!, legacy[2]!.trim()]];
  const out: Array<[string, string]> = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args)) !== null) {
    out.push([m[1]!, m[2]!.replace(/^(["'])([\s\S]*)\1$/, '$2')]);
  }
  return out;
}
