/**
 * `npm run bench:analysis -- [path]`: how fast the analysis pipeline of an audit runs over a
 * checkout. Without a path it generates a polyglot system of BENCH_FILES files (default 10,000:
 * TypeScript, Go and Python services with compose, Kubernetes, Terraform and GitHub Actions) in a
 * temporary folder.
 *
 * It runs, in this process and in the audit's order, what the audit's agents run after the
 * source stage: classify every file (as the source stage does), read it as text, the code, cloud
 * and cicd analyzers, reconcile, and the control assessment. It prints files/s and seconds per
 * stage, the total, the resulting graph's size and the peak RSS. Source acquisition (git) and
 * database writes are measured end to end by `npm run bench:audits`.
 *
 * Target (issue 4): a 10,000-file repository analysed in under 30 s on a 2-core machine.
 *
 * `-- --services 1000,4000,10000` instead runs the hostile compose system of issue 24 at those
 * sizes (bench/analysis-services.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { classifyPath, headBytes, type SourceType } from '../domain/audits/classify';
import type { SourceFile } from '../analysis/evidence';
import { analyzeCode } from '../analysis/code';
import { analyzeCloud } from '../analysis/cloud';
import { analyzeCicd } from '../analysis/cicd';
import { reconcile, type StoredEvidence } from '../analysis/reconcile';
import { assessControls } from '../analysis/controls';
import { intEnv } from './env';
import { runOneSize, runSizes } from './analysis-services';

const MAX_FILE_BYTES = 1024 * 1024;
const SKIP = new Set(['.git', 'node_modules', 'vendor', '.venv', 'dist', 'build']);

/** Every regular file under root (relative posix paths), skipping VCS and dependency folders. */
function walk(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  visit(root);
  return out.sort();
}

/** A generated polyglot system of about `total` files. */
function generate(root: string, total: number): void {
  const write = (rel: string, text: string) => {
    const full = path.join(root, rel);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, text);
  };
  const services = Math.max(8, Math.round(total / 250));
  const langs = ['ts', 'go', 'py'] as const;
  const names = Array.from({ length: services }, (_, i) => `svc${String(i).padStart(3, '0')}`);
  const compose: string[] = ['services:'];
  let files = 0;
  for (const [i, name] of names.entries()) {
    const lang = langs[i % 3]!;
    const next = names[(i + 1) % services]!;
    const dir = `services/${name}`;
    write(`${dir}/Dockerfile`, `FROM node:20\nCOPY . /app\nCMD ["node", "index.js"]\n`);
    if (lang === 'ts')
      write(
        `${dir}/package.json`,
        JSON.stringify({ name, dependencies: { pg: '^8.0.0', ioredis: '^5.0.0' } }, null, 2),
      );
    else if (lang === 'go') write(`${dir}/go.mod`, `module example.com/${name}\n\ngo 1.22\n`);
    else write(`${dir}/requirements.txt`, `psycopg2==2.9.9\nredis==5.0.0\n`);
    files += 2;
    write(
      `deploy/k8s/${name}.yaml`,
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${name}\n          image: registry.example.com/${name}:1.0.0\n          env:\n            - name: ${next.toUpperCase()}_ADDR\n              value: "${next}:8080"\n            - name: DATABASE_URL\n              value: postgres://app@db-${i % 4}:5432/app\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  selector:\n    app: ${name}\n  ports:\n    - port: 8080\n`,
    );
    files += 1;
    compose.push(
      `  ${name}:`,
      `    build: ./${dir}`,
      `    environment:`,
      `      ${next.toUpperCase()}_ADDR: ${next}:8080`,
      `      REDIS_URL: redis://cache-${i % 3}:6379`,
    );
  }
  write('docker-compose.yml', compose.join('\n') + '\n');
  write(
    'infra/main.tf',
    Array.from(
      { length: 4 },
      (_, i) =>
        `resource "aws_db_instance" "db_${i}" {\n  engine = "postgres"\n  storage_encrypted = true\n  publicly_accessible = false\n}\n`,
    ).join('\n'),
  );
  write(
    '.github/workflows/ci.yml',
    `name: ci\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: docker build -t registry.example.com/app:latest .\n      - run: docker push registry.example.com/app:latest\n`,
  );
  files += 3;
  // Fill the services with source files until the total is reached.
  for (let n = 0; files < total; n++, files++) {
    const i = n % services;
    const name = names[i]!;
    const lang = langs[i % 3]!;
    const body = Array.from({ length: 60 }, (_, k) => `// line ${k} of module ${n}`).join('\n');
    if (lang === 'ts')
      write(
        `services/${name}/src/mod${n}.ts`,
        `import { Pool } from 'pg';\nimport { helper } from './mod${Math.max(0, n - services)}';\nconst url = process.env.DATABASE_URL;\n${body}\nexport const x${n} = new Pool({ connectionString: url });\n`,
      );
    else if (lang === 'go')
      write(
        `services/${name}/pkg/mod${n}.go`,
        `package pkg\n\nimport (\n\t"database/sql"\n\t"os"\n)\n\n${body.replace(/\/\//g, '//')}\nvar dsn = os.Getenv("DATABASE_URL")\nvar _ = sql.Open\n`,
      );
    else
      write(
        `services/${name}/app/mod${n}.py`,
        `import os\nimport redis\n\n${body.replace(/\/\//g, '#')}\nclient = redis.Redis.from_url(os.environ["REDIS_URL"])\n`,
      );
  }
}

async function main(): Promise<void> {
  const arg = process.argv[2];
  if (arg === '--services-one') return runOneSize(Number(process.argv[3]));
  if (arg === '--services') {
    const sizes = (process.argv[3] ?? '1000,4000,10000').split(',').map(Number);
    if (sizes.some((n) => !Number.isInteger(n) || n < 2))
      throw new Error('--services takes sizes such as 1000,4000,10000');
    return runSizes(sizes);
  }
  let root: string;
  let cleanup = () => {};
  if (arg) {
    root = path.resolve(arg);
    if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`${root} is not a directory`);
  } else {
    const total = intEnv('BENCH_FILES', 10_000);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-analysis-'));
    cleanup = () => fs.rmSync(root, { recursive: true, force: true });
    const t = performance.now();
    generate(root, total);
    console.log(`generated ${total} files in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  try {
    const rows: Array<{ stage: string; files: number; ms: number }> = [];
    const timed = async <T>(stage: string, files: number, fn: () => Promise<T> | T): Promise<T> => {
      const t = performance.now();
      const result = await fn();
      rows.push({ stage, files, ms: performance.now() - t });
      return result;
    };

    const paths = await timed('walk', 0, () => walk(root));
    rows[0]!.files = paths.length;
    const byType: Record<SourceType, SourceFile[]> = { code: [], cloud: [], cicd: [] };
    const all: string[] = [];
    await timed('classify+read', paths.length, () => {
      for (const p of paths) {
        const full = path.join(root, p);
        const size = fs.statSync(full).size;
        if (size > MAX_FILE_BYTES) continue;
        const data = fs.readFileSync(full);
        all.push(p);
        const head = headBytes(p) ? data.subarray(0, headBytes(p)).toString('utf8') : undefined;
        const type = classifyPath(p, head);
        if (!type || data.subarray(0, 8192).includes(0)) continue;
        byType[type].push({ path: p, text: data.toString('utf8') });
      }
    });
    const code = await timed('code', byType.code.length, () => analyzeCode(byType.code));
    const cloud = await timed('cloud', byType.cloud.length, () => analyzeCloud(byType.cloud));
    const cicd = await timed('cicd', byType.cicd.length, () => analyzeCicd(byType.cicd));
    const evidence: StoredEvidence[] = [...code.evidence, ...cloud.evidence, ...cicd.evidence].map(
      (e, i) => ({ ...e, id: `e${i}` }),
    );
    const graph = await timed('reconcile', evidence.length, () => reconcile(evidence));
    const assessments = await timed('controls', evidence.length, () =>
      assessControls({
        evidence,
        entities: graph.entities,
        relationships: graph.relationships,
        files: all,
      }),
    );

    const total = rows.reduce((s, r) => s + r.ms, 0);
    console.log(`\nanalysis of ${root}`);
    console.log('stage            items      seconds   items/s');
    for (const r of rows)
      console.log(
        `${r.stage.padEnd(16)} ${String(r.files).padStart(6)} ${(r.ms / 1000).toFixed(2).padStart(12)} ${(r.ms > 0 ? Math.round((r.files / r.ms) * 1000) : 0).toString().padStart(9)}`,
      );
    console.log(
      `total            ${String(paths.length).padStart(6)} ${(total / 1000).toFixed(2).padStart(12)} ${Math.round(
        (paths.length / total) * 1000,
      )
        .toString()
        .padStart(9)} files/s`,
    );
    console.log(
      `graph: ${graph.entities.length} entities, ${graph.relationships.length} relationships, ${evidence.length} evidence, ${assessments.length} control assessments`,
    );
    console.log(
      `peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB; target 30 s for 10,000 files: ${total < 30_000 ? 'met' : 'NOT met'} (ratio ${(total / 30_000).toFixed(2)})`,
    );
  } finally {
    cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
