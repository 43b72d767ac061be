/**
 * The rules every archive format shares (platform/archive.ts's module comment lists them): the
 * limits, entry-name normalisation, symlink targets, paths beneath files or links, duplicates,
 * the ratio guard, and which error is reported. The format readers (archive-tar.ts,
 * archive-zip.ts) feed each entry to a Walker.
 */
import { posix } from 'node:path';
import zlib from 'node:zlib';
import { SourceError } from '../domain/audits/source-error';

export type ArchiveFormat = 'tar.gz' | 'zip';

export interface ArchiveLimits {
  /** Entries of kind file + symlink. */
  maxFiles: number;
  /** Sum of file sizes. */
  maxUnpackedBytes: number;
  /** Decompressed bytes / archive bytes (decompression bomb guard). */
  maxRatio: number;
  /** One file's size. */
  maxFileBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = Object.freeze({
  maxFiles: 20_000,
  maxUnpackedBytes: 512 * MiB,
  maxRatio: 200,
  maxFileBytes: 64 * MiB,
});

/** Decompressed bytes always allowed whatever the ratio (see the module comment). */
export const RATIO_GRACE_BYTES = 1 * MiB;
/** Longest entry path or link target, in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

export type ArchiveEntry =
  | { kind: 'file'; path: string; size: number; data: Buffer; mode: number }
  | { kind: 'symlink'; path: string; target: string };

export interface ArchiveSummary {
  files: number;
  symlinks: number;
  bytes: number;
  skipped: Array<{ path: string; reason: string }>;
}

export type OnEntry = (e: ArchiveEntry) => Promise<void>;

// ---------------------------------------------------------------------------------------------
// Checks and bookkeeping shared by both formats.

/** An error thrown by the caller's onEntry: passed through as it is, never called corrupt. */
class CallbackFailure {
  constructor(readonly error: unknown) {}
}

export const q = (s: string) => JSON.stringify(s);

export function corrupt(reason: string, details: Record<string, unknown> = {}): SourceError {
  return new SourceError('archive_corrupt', `archive is corrupt or truncated: ${reason}`, details);
}

/**
 * The error to report: ours (a refusal or the callback's) before any library error, which is
 * archive_corrupt, naming the entry being read when there is one.
 */
export function settle(current: string, ...errors: unknown[]): never {
  for (const err of errors) if (err instanceof CallbackFailure) throw err.error;
  for (const err of errors) if (err instanceof SourceError) throw err;
  const first = errors.find((e) => e !== undefined);
  const cause = first instanceof Error ? first.message : String(first);
  throw current === ''
    ? corrupt(cause, { cause })
    : corrupt(`${cause} (at entry ${q(current)})`, { path: current, cause });
}

export function isAbsolute(slashed: string): boolean {
  return slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed);
}

/** Checks and normalises an entry name; '' is the root itself. */
export function normalisePath(raw: string): string {
  if (raw.includes('\0')) throw corrupt(`entry name ${q(raw)} contains a NUL byte`, { path: raw });
  const slashed = raw.replace(/\\/g, '/');
  if (isAbsolute(slashed)) {
    throw new SourceError('archive_absolute_path', `archive entry ${q(raw)} has an absolute path`, {
      path: raw,
    });
  }
  const segments = slashed.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    throw new SourceError(
      'archive_path_traversal',
      `archive entry ${q(raw)} has a '..' segment: entries must stay inside the archive root`,
      { path: raw },
    );
  }
  const path = segments.join('/');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
    throw new SourceError(
      'archive_unsupported_entry',
      `archive entry ${q(path.slice(0, 200))}... has a path longer than ${MAX_PATH_BYTES} bytes`,
      { path: path.slice(0, 200), limit: MAX_PATH_BYTES },
    );
  }
  return path;
}

export function unsupported(path: string, type: string, extra = ''): SourceError {
  return new SourceError(
    'archive_unsupported_entry',
    `archive entry ${q(path)} is a ${type}, which is not supported${extra}`,
    { path, type },
  );
}

export function outsideRoot(path: string, target: string, kind: string, why: string): SourceError {
  return new SourceError(
    'archive_link_outside_root',
    `${kind} ${q(path)} -> ${q(target)} ${why}: links must stay inside the archive root`,
    { path, target, kind },
  );
}

/** Refuses a symlink target that is absolute or can lead outside the root (see module comment). */
function checkSymlinkTarget(path: string, target: string): void {
  if (target === '') throw unsupported(path, 'symlink with an empty target');
  if (target.includes('\0')) throw corrupt(`symlink ${q(path)} has a NUL byte in its target`);
  if (Buffer.byteLength(target) > MAX_PATH_BYTES) {
    throw unsupported(path, `symlink whose target is longer than ${MAX_PATH_BYTES} bytes`);
  }
  const slashed = target.replace(/\\/g, '/');
  if (isAbsolute(slashed)) throw outsideRoot(path, target, 'symlink', 'is absolute');
  const resolved = posix.normalize(posix.join(posix.dirname(path), slashed));
  if (resolved === '..' || resolved.startsWith('../')) {
    throw outsideRoot(path, target, 'symlink', 'resolves outside the root');
  }
  let descended = false;
  for (const segment of slashed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') descended = true;
    else if (descended) {
      throw outsideRoot(
        path,
        target,
        'symlink',
        "goes back up ('..') after descending, which can leave the root through another link",
      );
    }
  }
}

export class Walker {
  private files = 0;
  private symlinks = 0;
  private bytes = 0;
  private inflated = 0;
  private readonly inflateLimit: number;
  /** Paths of the files and symlinks seen so far, and which of them are symlinks. */
  private readonly paths = new Set<string>();
  private readonly links = new Set<string>();
  private readonly skipped: ArchiveSummary['skipped'] = [];
  /** The entry being read, to name it when the decompressed stream passes the ratio. */
  current = '';

  constructor(
    private readonly limits: ArchiveLimits,
    private readonly archiveBytes: number,
    private readonly onEntry: OnEntry | null,
  ) {
    this.inflateLimit = Math.max(limits.maxRatio * archiveBytes, RATIO_GRACE_BYTES);
  }

  /** Counts decompressed bytes; throws as soon as they pass the ratio limit. */
  inflate(n: number): void {
    this.inflated += n;
    if (this.inflated > this.inflateLimit) {
      throw new SourceError(
        'archive_ratio_exceeded',
        `archive inflates past ${this.inflateLimit} bytes ` +
          (this.current === '' ? 'between entries' : `at entry ${q(this.current)}`) +
          `: more than ` +
          `${this.limits.maxRatio} x its ${this.archiveBytes} bytes (maxRatio ${this.limits.maxRatio})`,
        {
          path: this.current,
          limit: this.inflateLimit,
          maxRatio: this.limits.maxRatio,
          archiveBytes: this.archiveBytes,
          inflated: this.inflated,
        },
      );
    }
  }

  /** Registers a file or symlink at `path`: count, duplicates, entries beneath a file or link. */
  private claim(path: string, kind: 'file' | 'symlink'): void {
    if (path === '') throw corrupt(`a ${kind} entry has an empty path`, { path });
    if (this.files + this.symlinks + 1 > this.limits.maxFiles) {
      throw new SourceError(
        'archive_too_many_files',
        `archive has more than ${this.limits.maxFiles} files and symlinks (maxFiles) at entry ${q(path)}`,
        { path, limit: this.limits.maxFiles },
      );
    }
    if (this.paths.has(path)) {
      throw new SourceError(
        'archive_duplicate_path',
        `archive entry ${q(path)} appears more than once`,
        { path },
      );
    }
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
      const ancestor = path.slice(0, i);
      if (this.paths.has(ancestor)) throw this.beneath(path, ancestor);
    }
    this.paths.add(path);
    if (kind === 'symlink') this.links.add(path);
  }

  private beneath(path: string, ancestor: string): SourceError {
    return this.links.has(ancestor)
      ? new SourceError(
          'archive_path_traversal',
          `archive entry ${q(path)} lies beneath the symlink ${q(ancestor)}`,
          { path, symlink: ancestor },
        )
      : new SourceError(
          'archive_duplicate_path',
          `archive entry ${q(path)} lies beneath the file ${q(ancestor)}: the path is both a file and a directory`,
          { path, file: ancestor },
        );
  }

  private tooLarge(path: string, size: number, what: 'file' | 'total'): SourceError {
    return what === 'file'
      ? new SourceError(
          'archive_too_large',
          `file ${q(path)} is larger than ${this.limits.maxFileBytes} bytes (maxFileBytes)`,
          { path, size, limit: this.limits.maxFileBytes },
        )
      : new SourceError(
          'archive_too_large',
          `archive unpacks to more than ${this.limits.maxUnpackedBytes} bytes (maxUnpackedBytes) at file ${q(path)}`,
          { path, limit: this.limits.maxUnpackedBytes },
        );
  }

  private checkSize(path: string, size: number): void {
    if (size > this.limits.maxFileBytes) throw this.tooLarge(path, size, 'file');
    if (this.bytes + size > this.limits.maxUnpackedBytes) throw this.tooLarge(path, size, 'total');
  }

  /**
   * A regular file: checks its declared size, reads `data` (counting every chunk against the
   * size limits; the ratio is counted where the bytes are inflated), checks it against the
   * declared size and CRC-32 when given, then hands it to the callback.
   */
  async file(
    path: string,
    mode: number,
    declaredSize: number,
    data: AsyncIterable<Buffer>,
    opts: { crc32?: number } = {},
  ): Promise<void> {
    this.claim(path, 'file');
    this.checkSize(path, declaredSize);
    const keep = this.onEntry !== null;
    const chunks: Buffer[] = [];
    let size = 0;
    let crc = 0;
    for await (const chunk of data) {
      size += chunk.length;
      this.checkSize(path, size);
      if (opts.crc32 !== undefined) crc = zlib.crc32(chunk, crc);
      if (keep) chunks.push(chunk);
    }
    if (size !== declaredSize) {
      throw corrupt(`file ${q(path)} has ${size} bytes, its header says ${declaredSize}`, { path });
    }
    if (opts.crc32 !== undefined && crc !== opts.crc32) {
      throw corrupt(`file ${q(path)} fails its CRC-32 check`, { path });
    }
    this.files += 1;
    this.bytes += size;
    if (this.onEntry) {
      const entry: ArchiveEntry = {
        kind: 'file',
        path,
        size,
        data: Buffer.concat(chunks, size),
        mode,
      };
      chunks.length = 0;
      await this.emit(entry);
    }
  }

  async symlink(path: string, target: string): Promise<void> {
    checkSymlinkTarget(path, target);
    this.claim(path, 'symlink');
    this.symlinks += 1;
    await this.emit({ kind: 'symlink', path, target });
  }

  private async emit(entry: ArchiveEntry): Promise<void> {
    if (!this.onEntry) return;
    try {
      await this.onEntry(entry);
    } catch (err) {
      throw new CallbackFailure(err);
    }
  }

  /**
   * The order-independent part of the "beneath a file or link" rule: an entry 'd/x' read before
   * the file or symlink 'd' is only caught here. Sorting with '/' as the lowest character puts
   * every path right before its descendants.
   */
  finish(): ArchiveSummary {
    const keys = [...this.paths].map((p) => p.replace(/\//g, '\0')).sort();
    for (let i = 0; i + 1 < keys.length; i++) {
      const key = keys[i]!;
      const next = keys[i + 1]!;
      if (next.startsWith(key + '\0')) {
        throw this.beneath(next.replace(/\0/g, '/'), key.replace(/\0/g, '/'));
      }
    }
    return {
      files: this.files,
      symlinks: this.symlinks,
      bytes: this.bytes,
      skipped: this.skipped,
    };
  }
}
