/** Real git repositories made by tests (git init, commits, branches) in temporary folders. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestRepo {
  dir: string;
  git(...args: string[]): string;
  /** Writes files (path -> content) and commits them; returns the new commit sha. */
  commit(files: Record<string, string | Buffer>, message?: string): string;
  remove(): void;
}

export function createRepo(files: Record<string, string | Buffer> = {}, branch = 'main'): TestRepo {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-repo-'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
    }).trim();
  git('init', '--quiet', '--initial-branch', branch);
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  const repo: TestRepo = {
    dir,
    git,
    commit(changes, message = 'change') {
      for (const [p, content] of Object.entries(changes)) {
        const full = path.join(dir, p);
        fs.mkdirSync(path.dirname(full), { recursive: true });
        fs.writeFileSync(full, content);
      }
      git('add', '--all');
      git('commit', '--quiet', '--allow-empty', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
  if (Object.keys(files).length) repo.commit(files, 'initial');
  return repo;
}

/** A small repository touching all three source types. */
export const SAMPLE_FILES: Record<string, string> = {
  'README.md': '# shop\n',
  'services/api/package.json': JSON.stringify({ name: 'api', dependencies: { pg: '^8' } }, null, 2),
  'services/api/src/index.ts':
    "import { Pool } from 'pg';\nexport const pool = new Pool({ connectionString: process.env.DATABASE_URL });\n",
  'services/api/Dockerfile': 'FROM node:20\nCOPY . .\nCMD ["node", "dist/index.js"]\n',
  'services/worker/go.mod': 'module example.com/worker\n\ngo 1.22\n',
  'services/worker/main.go': 'package main\n\nfunc main() {}\n',
  'docker-compose.yml':
    'services:\n  api:\n    build: services/api\n    environment:\n      DATABASE_URL: postgres://db:5432/shop\n  db:\n    image: postgres:16\n',
  'deploy/k8s/api.yaml': [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: api',
    'spec:',
    '  replicas: 2',
    '  selector:',
    '    matchLabels:',
    '      app: api',
    '  template:',
    '    metadata:',
    '      labels:',
    '        app: api',
    '    spec:',
    '      containers:',
    '        - name: api',
    '          image: ghcr.io/acme/api:1.4.0',
    '          env:',
    '            - name: DATABASE_URL',
    '              value: postgres://db:5432/shop',
    '---',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: api-svc',
    'spec:',
    '  selector:',
    '    app: api',
    '  ports:',
    '    - port: 80',
    '',
  ].join('\n'),
  'infra/main.tf': 'resource "aws_db_instance" "shop" {\n  engine = "postgres"\n}\n',
  '.github/workflows/ci.yml':
    'on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n',
};
