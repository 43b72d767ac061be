/**
 * `npm run bench:cli`: how long the CLI installed from its tarball (dist/archaudit-cli.tgz, built
 * first when missing; BENCH_REBUILD=1 rebuilds) into an empty folder takes from process start to
 * exit on `--help` and `--version`, as a CI step would run it (target: `--help` < 300 ms).
 * BENCH_RUNS (default 20) runs each; prints p50, p95 and the load.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { intEnv } from './env';

const root = path.join(__dirname, '..');
const tarball = path.join(root, 'dist', 'archaudit-cli.tgz');
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function main(): void {
  if (!fs.existsSync(tarball) || process.env.BENCH_REBUILD === '1')
    execFileSync('npm', ['run', '--silent', 'build:cli'], { cwd: root, stdio: 'inherit' });
  // Installed as a user installs it (offline: the package has no dependencies).
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'archaudit-bench-cli-'));
  process.on('exit', () => fs.rmSync(folder, { recursive: true, force: true }));
  execFileSync(
    'npm',
    ['install', '--silent', '--offline', '--no-audit', '--no-fund', '--prefix', folder, tarball],
    { cwd: folder, stdio: 'inherit' },
  );
  const bin = path.join(folder, 'node_modules', 'archaudit-cli', 'archaudit.cjs');
  const runs = intEnv('BENCH_RUNS', 20);
  console.log(
    `node ${process.version}, ${runs} runs each, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  // `node -e 0` first: the floor on this machine at this load, without which the CLI's own
  // figure cannot be read.
  for (const args of [
    ['-e', '0'],
    [bin, '--help'],
    [bin, '--version'],
  ]) {
    const times: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const t0 = performance.now();
      // CPU time (user + system, from GNU time when present) says what the process costs,
      // whatever the machine's load does to the wall time.
      const r = TIME
        ? spawnSync(TIME, ['-f', 'cpu %U %S', process.execPath, ...args], {
            cwd: os.tmpdir(),
            encoding: 'utf8',
          })
        : spawnSync(process.execPath, args, { cwd: os.tmpdir(), encoding: 'utf8' });
      times.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
      const m = /cpu ([0-9.]+) ([0-9.]+)/.exec(r.stderr);
      if (m) cpu.push((Number(m[1]) + Number(m[2])) * 1000);
    }
    times.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    const name =
      args[0] === bin ? `archaudit ${args.slice(1).join(' ')}` : `node ${args.join(' ')}`;
    const cpuText = cpu.length ? `; CPU p50 ${percentile(cpu, 50).toFixed(0)} ms` : '';
    console.log(
      `${name}: wall p50 ${percentile(times, 50).toFixed(0)} ms, p95 ${percentile(times, 95).toFixed(0)} ms${cpuText}`,
    );
  }
  console.log(
    `load after ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

main();
