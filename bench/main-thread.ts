/**
 * The worker's main thread as bench:fairness sees it: how long its event loop stood still (the
 * worker's own Prometheus gauges, read once a second) and, from a V8 CPU profile of that thread
 * (`node --cpu-prof`), which code held it (each busy stretch named by its heaviest frames).
 */
import fs from 'node:fs';
import path from 'node:path';

/** One reading of the worker's event-loop delay since the previous reading (seconds). */
export interface LoopReading {
  at: number;
  max: number;
  p99: number;
}

/** The event-loop delay gauges in a Prometheus text exposition (prom-client's default metrics). */
export function loopReading(text: string, at: number): LoopReading | null {
  const value = (name: string) => {
    const m = new RegExp(`^archaudit_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  const max = value('max');
  return Number.isFinite(max) ? { at, max, p99: value('p99') } : null;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A V8 CPU profile (`node --cpu-prof`), as far as the benchmarks read it. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A stretch of the main thread's time with no idle sample in it, and what ran in it. */
export interface BusyStretch {
  /** Start, in ms since the epoch (the profile's clock is the process's monotonic one). */
  startMs: number;
  ms: number;
  /** The heaviest frames: label and share of the stretch's samples. */
  top: Array<{ label: string; share: number }>;
}

/**
 * The main thread's CPU profile in `dir` (the one with thread id 0 of `pid`), or null. The
 * profile's times are microseconds of the monotonic clock; `monotonicOffsetMs` turns them into
 * wall-clock milliseconds.
 */
export function mainThreadProfile(dir: string, pid: number): CpuProfile | null {
  const file = fs
    .readdirSync(dir)
    .find((f) => f.endsWith('.cpuprofile') && f.includes(`.${pid}.0.`));
  return file ? (JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile) : null;
}

/**
 * The busy stretches of `profile` of at least `minMs`, longest first. A frame's label is the
 * outermost frame of our own code on its stack (activities, db, analysis...) with its innermost
 * one (tsx's line numbers are of its output: names tell more), or else the
 * package of the innermost library frame (the pg driver parsing a reply, Temporal's SDK), or
 * V8's own (garbage collector, program).
 */
export function busyStretches(
  profile: CpuProfile,
  root: string,
  monotonicOffsetMs: number,
  minMs: number,
): BusyStretch[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const labels = new Map<number, string>();
  const labelOf = (id: number): string => {
    const known = labels.get(id);
    if (known) return known;
    let outer: string | null = null;
    let inner: string | null = null;
    let library: string | null = null;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      const file = url.startsWith('file://') ? url.slice(7) : url;
      if (file.startsWith(root) && !file.includes('/node_modules/')) {
        outer = `${functionName || '(anonymous)'} (${path.relative(root, file)})`;
        inner ??= functionName || '(anonymous)';
      } else if (!library && file.includes('/node_modules/'))
        library = `${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)![1]} ${functionName}`;
    }
    const label = outer
      ? `${outer}${inner && !outer.startsWith(`${inner} `) ? ` > ${inner}` : ''}`
      : (library ?? byId.get(id)!.callFrame.functionName);
    labels.set(id, label);
    return label;
  };
  const stretches: BusyStretch[] = [];
  let t = profile.startTime;
  let start = -1;
  let counts = new Map<string, number>();
  let n = 0;
  const close = (end: number) => {
    const ms = (end - start) / 1000;
    if (start >= 0 && ms >= minMs)
      stretches.push({
        startMs: start / 1000 + monotonicOffsetMs,
        ms,
        top: [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3)
          .map(([label, c]) => ({ label, share: c / n })),
      });
    start = -1;
    counts = new Map();
    n = 0;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const id = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      close(t);
      continue;
    }
    if (start < 0) start = t;
    const label = labelOf(id);
    counts.set(label, (counts.get(label) ?? 0) + 1);
    n++;
  }
  close(t);
  return stretches.sort((a, b) => b.ms - a.ms);
}
