/**
 * `npm run bench:findings -- <checkouts>`: how far a reviewer can trust the findings (issue 30).
 * Precision and recall per control and overall, on whole public systems labelled by hand.
 *
 * `bench/findings/<system>.json` holds, per system, the repository, pinned commit and optional
 * sub-folder (as bench/accuracy), and per labelled control two lists of repository paths, read
 * from the system's own files (never from this tool's output):
 *   - `violations`: files holding a true violation of the control (a Dockerfile whose deployed
 *     image runs as root, a manifest referencing an image without tag or as latest, a committed
 *     literal secret, a manifest with dependencies and no lock);
 *   - `look_alikes`: files that look like one and are not (placeholders, overridden users,
 *     build-only images, compiled requirement files...).
 * The unit is (control, file): a finding counts at the path of its location. A finding on a
 * violation is a true positive; on a look-alike or on a file the labels do not name, a false
 * positive (the labels list every violation of a labelled control); a violation without a finding
 * is a false negative. Controls a system does not label are not scored for it. A finding about the
 * repository as a whole (owners-declared: no CODEOWNERS) has no file: its path is `(repository)`.
 * The CI controls are labelled per workflow or action file, the container controls per compose
 * file or manifest, the storage controls per Terraform file. The graph controls are labelled per
 * graph subject, not per file: no-shared-database by the datastore's entity key
 * (`datastore:orders-db`), no-service-dependency-cycle by the key of the cycle's first member in
 * sorted order (the finding's entity); their `path` holds that key.
 *
 * `<checkouts>` (or ACCURACY_CHECKOUTS) holds a git checkout per repository as `<owner>__<repo>`,
 * as for bench:accuracy; systems without one are listed as skipped. Exits 0: a measurement.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assessControls } from '../analysis/controls';
import { analyzeTree, headCommit } from './accuracy';

export const LABELS_DIR = path.join(__dirname, 'findings');

/** Controls on the graph: a finding is scored at its entity key, not at a file. */
export const GRAPH_CONTROLS = new Set(['no-shared-database', 'no-service-dependency-cycle']);

/** The path a finding without a location (about the whole repository) is scored at. */
export const REPOSITORY = '(repository)';

export interface ControlLabels {
  violations: Array<{ path: string; why: string }>;
  look_alikes: Array<{ path: string; why: string }>;
}

export interface SystemLabels {
  system: string;
  repository: string;
  commit: string;
  subdir?: string | null;
  controls: Record<string, ControlLabels>;
}

export interface Tally {
  tp: string[];
  fp: string[];
  fn: string[];
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);

/** Scores one control of one system: predicted finding paths against the labels. */
export function scoreControl(labels: ControlLabels, predicted: string[]): Tally {
  const violations = new Set(labels.violations.map((v) => v.path));
  const found = new Set(predicted);
  return {
    tp: [...found].filter((p) => violations.has(p)).sort(),
    fp: [...found].filter((p) => !violations.has(p)).sort(),
    fn: [...violations].filter((p) => !found.has(p)).sort(),
  };
}

export const precision = (t: Tally) => ratio(t.tp.length, t.tp.length + t.fp.length);
export const recall = (t: Tally) => ratio(t.tp.length, t.tp.length + t.fn.length);

export function listSystems(dir = LABELS_DIR): SystemLabels[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as SystemLabels);
}

/** Every file git tracks under subdir (the audit's file list, for owners-declared and co). */
function trackedFiles(root: string, subdir: string | null | undefined): string[] {
  const out = execFileSync('git', ['-C', root, 'ls-files', '-z'], { maxBuffer: 256 << 20 })
    .toString('utf8')
    .split('\0')
    .filter(Boolean);
  const prefix = subdir ? `${subdir.replace(/\/+$/, '')}/` : '';
  return out.filter((p) => p.startsWith(prefix));
}

/** The findings' paths per control for one checkout. */
export async function predict(
  root: string,
  subdir: string | null | undefined,
): Promise<Map<string, string[]>> {
  const t = await analyzeTree(root, subdir ?? null);
  const assessed = assessControls({
    entities: t.graph.entities,
    relationships: t.graph.relationships,
    evidence: t.evidence,
    files: trackedFiles(root, subdir),
  });
  return new Map(
    assessed.map((a) => [
      a.control_key,
      [
        ...new Set(
          a.findings.map((f) =>
            GRAPH_CONTROLS.has(a.control_key)
              ? (f.entity_key ?? REPOSITORY)
              : (f.location?.path ?? REPOSITORY),
          ),
        ),
      ],
    ]),
  );
}

const pct = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const checkouts = process.argv[2] ?? process.env.ACCURACY_CHECKOUTS ?? '';
  const perControl = new Map<string, Tally>();
  const overall: Tally = { tp: [], fp: [], fn: [] };
  const rows: string[] = [];
  for (const s of listSystems()) {
    const root = path.join(checkouts, s.repository.replace('/', '__'));
    if (!checkouts || !fs.existsSync(root)) {
      rows.push(`${s.system}: skipped (no checkout at ${root})`);
      continue;
    }
    const head = headCommit(root);
    const predicted = await predict(root, s.subdir);
    const sys: Tally = { tp: [], fp: [], fn: [] };
    const details: string[] = [];
    for (const [control, labels] of Object.entries(s.controls).sort()) {
      const t = scoreControl(labels, predicted.get(control) ?? []);
      for (const k of ['tp', 'fp', 'fn'] as const) {
        sys[k].push(...t[k].map((p) => `${control} ${p}`));
        overall[k].push(...t[k].map((p) => `${s.system} ${control} ${p}`));
        const c = perControl.get(control) ?? { tp: [], fp: [], fn: [] };
        c[k].push(...t[k].map((p) => `${s.system} ${p}`));
        perControl.set(control, c);
      }
      for (const p of t.fp) details.push(`    FP ${control} ${p}`);
      for (const p of t.fn) details.push(`    FN ${control} ${p}`);
    }
    rows.push(
      `${s.system}${head && head !== s.commit ? ` (checkout at ${head.slice(0, 12)}, labels at ${s.commit.slice(0, 12)})` : ''}: precision ${pct(precision(sys))} recall ${pct(recall(sys))} (tp ${sys.tp.length}, fp ${sys.fp.length}, fn ${sys.fn.length})`,
      ...details,
    );
  }
  const load = () =>
    os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ');
  console.log(`Load average (1, 5, 15 min) at start: ${load()}, on ${os.cpus().length} cores`);
  console.log('Per system');
  for (const r of rows) console.log(`  ${r}`);
  console.log('\nPer control');
  for (const [control, t] of [...perControl].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
    console.log(
      `  ${control.padEnd(28)} precision ${pct(precision(t))} recall ${pct(recall(t))} (tp ${t.tp.length}, fp ${t.fp.length}, fn ${t.fn.length})`,
    );
  console.log(`\nLoad average at end: ${load()}`);
  console.log(
    `\nOverall: precision ${pct(precision(overall))} recall ${pct(recall(overall))} (tp ${overall.tp.length}, fp ${overall.fp.length}, fn ${overall.fn.length})`,
  );
}

if (require.main === module) void main();
