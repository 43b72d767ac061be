/**
 * Reading a fetched commit (git.ts, fetchCommit): its tree listing and its blobs, from the bare
 * repository in the caller's workDir, with no transport allowed.
 */
import type { ChildProcess } from 'node:child_process';
import { SourceError } from '../../../domain/audits/source-error';
import { killGroup, TailBuffer } from './process-launcher';
import { redact, runGit, SHA_RE, spawnGit, STDERR_LIMIT, summarize } from './git-run';

export interface TreeEntry {
  /** Path as git stores it ('/'-separated, not quoted; bytes that are not UTF-8 become U+FFFD). */
  path: string;
  mode: string;
  kind: 'file' | 'symlink' | 'submodule';
  objectId: string;
  /** Blob size in bytes; 0 for submodules. */
  size: number;
}

/** Bound on a commit's tree listing (ls-tree -r -l -z: ~100 bytes per file; ~2.5M files). */
const TREE_LISTING_LIMIT = 256 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// listTree
// ---------------------------------------------------------------------------------------------

/** Every entry of the commit's tree, recursively (git ls-tree -r -l -z <sha>), paths as git stores them. */
export async function listTree(workDir: string, commitSha: string): Promise<TreeEntry[]> {
  if (!SHA_RE.test(commitSha)) {
    throw new SourceError('invalid_ref', 'commit sha must be 40 lowercase hex characters', {
      commitSha,
    });
  }
  // No network here: no transport is allowed. Started by the launcher; the listing comes back
  // whole (bounded) and is parsed here.
  const res = await runGit(['ls-tree', '-r', '-l', '-z', '--full-tree', `${commitSha}^{commit}`], {
    workDir,
    target: null,
    wholeStdoutLimit: TREE_LISTING_LIMIT,
  });
  if (res.overflow) {
    throw new SourceError(
      'source_too_large',
      `the commit's tree listing is over ${TREE_LISTING_LIMIT} bytes`,
      { commitSha },
    );
  }
  if (res.code !== 0) {
    const text = res.stderr;
    if (/not a valid object name|not a tree object|bad object/i.test(text)) {
      throw new SourceError('commit_not_found', `commit ${commitSha} is not in the repository`, {
        commitSha,
      });
    }
    throw new Error(`git ls-tree failed: ${summarize(text)}`);
  }
  // Records are NUL-terminated: "<mode> SP <type> SP <oid> SP+ <size> TAB <path>".
  const data = Buffer.from(res.stdoutBytes!);
  const entries: TreeEntry[] = [];
  let start = 0;
  for (let nul = data.indexOf(0); nul >= 0; nul = data.indexOf(0, start)) {
    entries.push(parseTreeRecord(data.subarray(start, nul)));
    start = nul + 1;
  }
  if (start !== data.length) throw new Error('git ls-tree output ended in the middle of a record');
  return entries;
}

function parseTreeRecord(record: Buffer): TreeEntry {
  const tab = record.indexOf(9);
  if (tab < 0) throw new Error('malformed git ls-tree record');
  const [mode, type, objectId, size] = record.subarray(0, tab).toString('latin1').split(/ +/);
  const entryPath = record.subarray(tab + 1).toString('utf8');
  if (!mode || !objectId || !SHA_RE.test(objectId) || size === undefined || entryPath === '') {
    throw new Error('malformed git ls-tree record');
  }
  if (type === 'commit') return { path: entryPath, mode, kind: 'submodule', objectId, size: 0 };
  if (type !== 'blob' || !/^\d+$/.test(size)) {
    throw new Error(`unexpected git ls-tree entry of type ${String(type)}`);
  }
  const kind = mode === '120000' ? 'symlink' : 'file';
  return { path: entryPath, mode, kind, objectId, size: Number(size) };
}

function waitClose(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
}

// ---------------------------------------------------------------------------------------------
// readBlobs
// ---------------------------------------------------------------------------------------------

/**
 * Up to this many bytes of output (blobs and cat-file's headers), a read runs through the
 * process launcher, its output returned whole: starting cat-file here forks this process, and
 * with a large audit's graph in memory that fork stopped the worker's main thread for 100-400 ms
 * (issue 24, fair sharing). Larger reads stream from a cat-file started here.
 */
const LAUNCHED_READ_BYTES = 16 * 1024 * 1024;

/**
 * Streams blob contents for the given object ids via ONE `git cat-file --batch` process; calls
 * onBlob in order (and waits for it before reading on). Symlink blobs are the link target text.
 * Every id must be a blob of the repository (a file or symlink entry of listTree; submodule
 * entries have no object here). Each blob is held in memory whole: choose ids by their size.
 * No filter or textconv driver runs (plain --batch). `totalBytes`, the blobs' sizes summed (from
 * listTree), lets a small read run through the process launcher.
 */
export async function readBlobs(
  workDir: string,
  objectIds: string[],
  onBlob: (objectId: string, data: Buffer) => Promise<void>,
  totalBytes?: number,
): Promise<void> {
  for (const id of objectIds) {
    // One id per line on stdin: an id is exactly 40 hex, so it cannot add lines or arguments.
    if (!SHA_RE.test(id)) throw new TypeError(`invalid object id ${JSON.stringify(id)}`);
  }
  if (objectIds.length === 0) return;
  const input = `${objectIds.join('\n')}\n`;
  // A header line ("<id> blob <size>") and an LF per object besides the content.
  const expected = totalBytes === undefined ? Infinity : totalBytes + objectIds.length * 64;
  if (expected <= LAUNCHED_READ_BYTES) {
    const result = await runGit(['cat-file', '--batch', '--buffer'], {
      workDir,
      target: null,
      stdin: input,
      wholeStdoutLimit: LAUNCHED_READ_BYTES,
    });
    // Sizes that were not what listTree said: read again, streaming.
    if (!result.overflow) {
      const reader = catFileReader(objectIds, onBlob);
      const out = result.stdoutBytes ?? new Uint8Array();
      await reader.push(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      reader.finish(result.stderr);
      if (result.code !== 0) throw new Error(`git cat-file failed: ${summarize(result.stderr)}`);
      return;
    }
  }

  const child = spawnGit(['cat-file', '--batch', '--buffer'], {
    workDir,
    target: null,
    gitDir: true,
    stdin: true,
  });
  const stderr = new TailBuffer(STDERR_LIMIT);
  child.stderr!.on('data', (c: Buffer) => stderr.push(c));
  const closed = waitClose(child);
  // git exiting early makes the write fail (EPIPE); the exit code reports it.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(input);

  try {
    const reader = catFileReader(objectIds, onBlob);
    for await (const chunk of child.stdout! as AsyncIterable<Buffer>) await reader.push(chunk);
    reader.finish(redact(stderr.toString()));
  } catch (err) {
    // Never leave cat-file running (e.g. when onBlob throws).
    killGroup(child);
    await closed.catch(() => undefined);
    throw err;
  }
  const code = await closed;
  if (code !== 0) throw new Error(`git cat-file failed: ${summarize(redact(stderr.toString()))}`);
}

/**
 * Reads `git cat-file --batch` output chunk by chunk, calling onBlob for each object in order;
 * `finish` throws unless every object came whole (`stderr`, redacted, says why).
 */
function catFileReader(
  objectIds: string[],
  onBlob: (objectId: string, data: Buffer) => Promise<void>,
) {
  let index = 0;
  let header: Buffer = Buffer.alloc(0);
  let body: Buffer | null = null; // content + the LF that ends it
  let filled = 0;
  return {
    async push(chunk: Buffer): Promise<void> {
      let off = 0;
      while (off < chunk.length) {
        if (body === null) {
          const nl = chunk.indexOf(10, off);
          if (nl < 0) {
            header = Buffer.concat([header, chunk.subarray(off)]);
            if (header.length > 1024) throw new Error('malformed git cat-file output');
            break;
          }
          const line = Buffer.concat([header, chunk.subarray(off, nl)]).toString('latin1');
          header = Buffer.alloc(0);
          off = nl + 1;
          const expected = objectIds[index];
          if (expected === undefined) throw new Error('git cat-file returned too many objects');
          const m = /^([0-9a-f]{40}) (\S+) (\d+)$/.exec(line);
          if (!m || m[1] !== expected) {
            throw new Error(`object ${expected} is not in the repository (${line.slice(0, 100)})`);
          }
          if (m[2] !== 'blob') throw new Error(`object ${expected} is a ${m[2]}, not a blob`);
          body = Buffer.allocUnsafe(Number(m[3]) + 1);
          filled = 0;
        }
        if (body !== null) {
          const n = Math.min(body.length - filled, chunk.length - off);
          chunk.copy(body, filled, off, off + n);
          filled += n;
          off += n;
          if (filled === body.length) {
            if (body[body.length - 1] !== 10) throw new Error('malformed git cat-file output');
            const data = body.subarray(0, body.length - 1);
            const id = objectIds[index]!;
            body = null;
            index += 1;
            await onBlob(id, data);
          }
        }
      }
    },
    finish(stderr: string): void {
      if (index !== objectIds.length || body !== null)
        throw new Error(
          `git cat-file stopped after ${index} of ${objectIds.length} objects: ${summarize(stderr)}`,
        );
    },
  };
}
