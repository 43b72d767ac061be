/**
 * Jenkinsfiles, read lightly with regular expressions and brace matching: declarative pipelines
 * only (`pipeline { ... }`). Stages become jobs; agent docker images, `sh`/`bat` steps with
 * docker/kubectl/helm and friends, `docker.build`, environment literals and credentials are
 * read. Groovy is a programming language: scripted pipelines are reported as a gap.
 */
import type { AnalyzerOutput, SourceFile } from '../evidence';
import { imageAttributes, imageKey, parseImageRef } from '../shared/images';
import { Sink, pathKey, type JobRef, type LocatedOp, pipelineName } from './common';

import { parseUses, pinPhrase } from './github-steps';
import { scanScript } from './commands';
import type { Span } from '../shared/evidence';
import { LineIndex, uniqueSorted } from '../shared/text';

const PROVIDER = 'jenkins';

/** `Jenkinsfile` → `root`; `ci/Jenkinsfile.deploy` → `ci-deploy`. */
export function jenkinsPipelineName(path: string): string {
  return pipelineName(path, (f) =>
    f.replace(/^Jenkinsfile[.-]?/, '').replace(/[.-]?jenkinsfile$/i, ''),
  );
}

/** The text with comments blanked out (newlines kept, so offsets and lines stay true). */
function stripComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const q = quoteAt(text, i);
    if (q) {
      const end = stringEnd(text, i, q);
      out += text.slice(i, end);
      i = end;
    } else if (text.startsWith('//', i) && (i === 0 || /\s|[;{}()]/.test(text[i - 1] ?? ''))) {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? text.length : nl;
      out += ' '.repeat(end - i);
      i = end;
    } else if (text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      const end = close < 0 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\n]/g, ' ');
      i = end;
    } else out += text[i++];
  }
  return out;
}

function quoteAt(text: string, i: number): string | null {
  for (const q of ["'''", '"""', "'", '"']) if (text.startsWith(q, i)) return q;
  return null;
}

/** Offset just past the string literal opening at `i` with quote `q`. */
function stringEnd(text: string, i: number, q: string): number {
  for (let j = i + q.length; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text.startsWith(q, j)) return j + q.length;
    else if (q.length === 1 && text[j] === '\n') return j;
  }
  return text.length;
}

/** Offset just past the `}` closing the block whose `{` is at `open`. */
function blockEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const q = quoteAt(text, i);
    if (q) {
      i = stringEnd(text, i, q) - 1;
      continue;
    }
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i + 1;
  }
  return text.length;
}

interface Block {
  start: number;
  open: number;
  end: number;
}

function findBlocks(
  text: string,
  re: RegExp,
  from = 0,
  to = text.length,
): (Block & { match: RegExpExecArray })[] {
  const out: (Block & { match: RegExpExecArray })[] = [];
  const g = new RegExp(re.source, 'g');
  g.lastIndex = from;
  let m: RegExpExecArray | null;
  while ((m = g.exec(text)) && m.index < to) {
    const open = m.index + m[0].length - 1;
    out.push({ start: m.index, open, end: blockEnd(text, open), match: m });
  }
  return out;
}

/** Analyzes one Jenkinsfile. */
export function analyzeJenkinsfile(file: SourceFile): AnalyzerOutput {
  const sink = new Sink(file, PROVIDER);
  const text = stripComments(file.text);
  const index = new LineIndex(file.text);
  const lineOf = (offset: number): number => index.lineAt(offset);
  const span = (b: { start: number; end: number }): Span => ({
    start: lineOf(b.start),
    end: lineOf(Math.max(b.start, b.end - 1)),
  });
  const name = jenkinsPipelineName(file.path);
  const pipelineKey = pathKey('pipeline', PROVIDER, name);
  const pipeline = findBlocks(text, /\bpipeline\s*\{/)[0];
  const libraries = [...text.matchAll(/@Library\(\s*\[?\s*['"]([^'"]+)['"]/g)];
  if (!pipeline) {
    const total = file.text.split('\n').length;
    sink.add(
      { start: 1, end: total },
      'pipeline-declared',
      pipelineKey,
      null,
      null,
      `scripted Jenkins pipeline ${name} (not analyzed further)`,
      {
        scripted: true,
        stages: [...text.matchAll(/\bstage\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]),
      },
    );
    sink.gap(
      'jenkins_scripted_pipeline',
      'scripted Jenkins pipeline (no `pipeline {` block): Groovy code is not evaluated, so stages and steps are not analyzed',
    );
    return sink.output();
  }
  const stagesBlock = findBlocks(text, /\bstages\s*\{/, pipeline.open, pipeline.end)[0];
  const head = text.slice(pipeline.open, stagesBlock?.start ?? pipeline.end);
  const agentImage = dockerAgent(head);
  const env = readEnvironment(text, pipeline.open, stagesBlock?.start ?? pipeline.end);
  const stages = findBlocks(
    text,
    /\bstage\s*\(\s*['"]([^'"]+)['"]\s*\)\s*\{/,
    pipeline.open,
    pipeline.end,
  );
  sink.add(
    span(pipeline),
    'pipeline-declared',
    pipelineKey,
    null,
    null,
    `declarative Jenkins pipeline ${name} with stages ${stages.map((s) => s.match[1]).join(', ') || '(none)'}`,
    {
      scripted: false,
      agent: agentImage
        ? { docker: agentImage.image }
        : (/\bagent\s+(any|none)\b/.exec(head)?.[1] ?? null),
      stages: stages.map((s) => s.match[1]),
      triggers: [...head.matchAll(/\b(cron|pollSCM|githubPush|upstream)\s*\(([^)]*)\)/g)].map(
        (m) => `${m[1]}(${(m[2] ?? '').trim()})`,
      ),
      credentials: credentialIds(head),
    },
  );
  for (const m of libraries) {
    const u = parseUses(m[1] ?? '');
    const lib = (m[1] ?? '').split('@')[0] ?? '';
    sink.add(
      span({ start: m.index, end: m.index + m[0].length }),
      'action-use',
      pipelineKey,
      'uses',
      pathKey('library', lib),
      `Jenkins pipeline ${name} loads shared library ${m[1]} (${u.ref ? pinPhrase(u) : 'default version, not pinned'})`,
      {
        uses: m[1],
        ref: u.ref,
        pin: u.ref ? u.pin : 'branch',
        pinned: u.pinned,
      },
    );
  }
  const pipelineRef = { key: pipelineKey, label: `Jenkins pipeline ${name}` };
  const vars = literalSecrets(sink, env, pipelineRef, lineOf);
  if (agentImage)
    imageEvidence(sink, pipelineRef, agentImage.image, span(agentImage.at(pipeline.open)), 'agent');
  for (const s of stages) {
    const stageName = s.match[1] ?? '';
    const inner = stages.filter((o) => o !== s && o.start > s.start && o.end <= s.end);
    const parent = stages.filter((o) => o !== s && o.start < s.start && o.end >= s.end).pop();
    const ref: JobRef = {
      key: pathKey('job', PROVIDER, name, stageName),
      label: `stage ${stageName} in Jenkins pipeline ${name}`,
      environment: null,
    };
    const own = (offset: number): boolean =>
      !inner.some((o) => offset >= o.start && offset < o.end);
    const body = text.slice(s.open, s.end);
    const stageAgent = dockerAgent(body);
    const when = findBlocks(text, /\bwhen\s*\{/, s.open, s.end).find((b) => own(b.start));
    sink.jobDeclared(
      span(s),
      ref,
      pipelineKey,
      `${ref.label}${stageAgent ? ` runs in ${stageAgent.image}` : ''}`,
      {
        parent_stage: parent?.match[1] ?? null,
        agent: stageAgent ? { docker: stageAgent.image } : null,
        when: when
          ? text
              .slice(when.open + 1, when.end - 1)
              .replace(/\s+/g, ' ')
              .trim()
          : null,
        parallel: /\bparallel\s*\{/.test(body),
        credentials: credentialIds(body),
      },
    );
    if (stageAgent)
      imageEvidence(sink, ref, stageAgent.image, span(stageAgent.at(s.open)), 'agent');
    const stageVars = {
      ...vars,
      ...literalSecrets(
        sink,
        readEnvironment(text, s.open, s.end).filter((v) => own(v.offset)),
        ref,
        lineOf,
      ),
    };
    for (const op of stageOps(file.text, text, s, stageVars, lineOf))
      if (own(op.offset)) sink.emitOp(ref, op);
  }
  return sink.output();
}

/** `agent { docker { image 'x' } }`, `agent { docker 'x' }`, or `docker.image('x').inside`. */
function dockerAgent(
  body: string,
): { image: string; at: (base: number) => { start: number; end: number } } | null {
  const m =
    /\bagent\s*\{\s*docker\s*(?:\{[^}]*?\bimage\s+|\(?\s*)['"]([^'"]+)['"]/.exec(body) ??
    /\bdocker\.image\(\s*['"]([^'"]+)['"]\s*\)\.inside/.exec(body);
  if (!m?.[1]) return null;
  const idx = m.index;
  const len = m[0].length;
  return { image: m[1], at: (base) => ({ start: base + idx, end: base + idx + len }) };
}

function imageEvidence(
  sink: Sink,
  ref: { key: string; label: string },
  raw: string,
  lines: Span,
  role: string,
): void {
  const img = parseImageRef(raw);
  if (img)
    sink.add(
      lines,
      'image-reference',
      ref.key,
      'uses_image',
      imageKey(img),
      `${ref.label} runs in docker agent ${img.raw}`,
      { role, ...imageAttributes(img) },
    );
}

function credentialIds(body: string): string[] {
  const ids = [
    ...body.matchAll(
      /\bcredentials\(\s*['"]([^'"]+)['"]\s*\)|\bcredentialsId\s*:\s*['"]([^'"]+)['"]/g,
    ),
  ].map((m) => m[1] ?? m[2] ?? '');
  return uniqueSorted(ids.filter(Boolean));
}

interface EnvVar {
  name: string;
  value: string | null;
  offset: number;
}

/** `NAME = 'literal'` / `NAME = credentials('id')` lines of `environment { }` blocks in a range. */
function readEnvironment(text: string, from: number, to: number): EnvVar[] {
  return findBlocks(text, /\benvironment\s*\{/, from, to).flatMap((b) =>
    [
      ...text
        .slice(b.open + 1, b.end - 1)
        .matchAll(
          /^[ \t]*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(['"])((?:(?!\2).)*)\2[ \t]*$|^[ \t]*([A-Za-z_][A-Za-z0-9_]*)\s*=/gm,
        ),
    ].map((m) => ({
      name: m[1] ?? m[4] ?? '',
      value: m[1] ? (m[3] ?? '') : null,
      offset: b.open + 1 + m.index + (m[0].length - m[0].trimStart().length),
    })),
  );
}

function literalSecrets(
  sink: Sink,
  vars: EnvVar[],
  owner: { key: string; label: string },
  lineOf: (o: number) => number,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of vars) {
    const line = lineOf(v.offset);
    sink.keepVariable(owner, out, {
      name: v.name,
      value: v.value ?? undefined,
      lines: { start: line, end: line },
      scope: 'environment',
      phrase: 'environment variable',
    });
  }
  return out;
}

/** `sh`/`bat`/`powershell` scripts and `docker.build(...)` in a stage, with their offsets. */
function stageOps(
  raw: string,
  text: string,
  s: Block,
  vars: Record<string, string>,
  lineOf: (o: number) => number,
): (LocatedOp & { offset: number })[] {
  const out: (LocatedOp & { offset: number })[] = [];
  const re = /\b(sh|bat|powershell|pwsh)\s*\(?\s*(?:script\s*:\s*)?('''|"""|'|")/g;
  re.lastIndex = s.open;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && m.index < s.end) {
    const q = m[2] ?? "'";
    const contentStart = m.index + m[0].length;
    const end = stringEnd(raw, contentStart - q.length, q);
    const script = raw
      .slice(contentStart, end - q.length)
      .replace(/\$\{env\.([A-Za-z_]\w*)\}/g, '${$1}');
    const first = lineOf(contentStart);
    for (const op of scanScript(script, vars)) {
      const start = first + op.line;
      out.push({ ...op, lines: { start, end: start + op.line_count - 1 }, offset: m.index });
    }
    re.lastIndex = end;
  }
  for (const b of text.slice(s.open, s.end).matchAll(/\bdocker\.build\(\s*['"]([^'"]+)['"]/g)) {
    const offset = s.open + b.index;
    const line = lineOf(offset);
    const image = b[1] ?? '';
    out.push({
      kind: 'image-build',
      tool: 'docker',
      action: 'docker.build',
      image,
      line: 0,
      line_count: 1,
      lines: { start: line, end: line },
      offset,
    });
    const push = /\.push\(/.exec(text.slice(offset, s.end));
    if (push) {
      const pl = lineOf(offset + push.index);
      out.push({
        kind: 'image-push',
        tool: 'docker',
        action: 'push()',
        image,
        line: 0,
        line_count: 1,
        lines: { start: pl, end: pl },
        offset,
      });
    }
  }
  return out;
}
