/**
 * Safe reading of uploaded source archives (tar.gz and zip). Nothing is written to disk: each
 * file or symlink goes to a callback, one at a time, in archive order. Every refusal is a
 * SourceError whose code names the rule and whose message names the entry and the limit.
 *
 * Rules, beyond the limits in ArchiveLimits:
 * - Entry names: backslashes count as '/'; a name that is absolute ('/x', '\x', 'C:x') is
 *   refused (archive_absolute_path), so is any '..' segment (archive_path_traversal), a NUL byte
 *   (archive_corrupt) or a path over MAX_PATH_BYTES (archive_unsupported_entry). Paths are
 *   normalised: '.' segments and empty segments dropped (so no leading './', no duplicate or
 *   trailing slash).
 * - Directories are skipped silently. Every other entry is either emitted or refused; nothing is
 *   skipped quietly (`skipped` in the summary is kept for callers and is currently always empty).
 * - Symlinks (tar symlinks; zip entries whose unix mode says S_IFLNK, the data being the target)
 *   are refused (archive_link_outside_root) when the target is absolute, resolves (posix, from
 *   the link's directory) outside the root, or goes back up after descending ('a/../b'): such a
 *   target can leave the root through another in-root link (a -> '.', b -> 'a/..'), which a
 *   lexical check cannot see.
 * - No entry may lie beneath a file or symlink of the archive (a symlink 'd' and an entry 'd/x':
 *   archive_path_traversal, the classic "write through a link"; a file 'd' and 'd/x':
 *   archive_duplicate_path), in either order. The same path twice: archive_duplicate_path.
 * - Tar hard links: a target outside the root is archive_link_outside_root; any other hard link
 *   is archive_unsupported_entry. Copying the target's data would mean keeping earlier files in
 *   memory or reading the archive twice; source trees rarely hold hard links, and
 *   `tar --hard-dereference` makes an archive without them.
 * - Tar 'contiguous-file' entries are regular files (as POSIX says readers may treat them);
 *   devices, fifos and unknown types (GNU sparse, volume labels, ...) are
 *   archive_unsupported_entry. Zip entries that are encrypted, use a compression method other
 *   than stored/deflate, or whose unix mode is a device, fifo or socket, likewise.
 * - Limits are checked on declared sizes first, then again on the bytes actually produced while
 *   streaming (headers can lie). The ratio guard counts every decompressed byte (for tar.gz the
 *   whole tar stream, for zip each entry's inflated data) and stops as soon as it passes
 *   max(maxRatio x archive bytes, RATIO_GRACE_BYTES): the grace keeps tiny archives, whose tar
 *   padding alone compresses more than 200x, from being refused.
 * - A file's `mode` is its permission bits (mode & 0o7777): the tar header's, or the zip entry's
 *   unix mode, 0o644 when the zip entry has none (made on DOS/Windows).
 * - Zip entries are checked against their CRC-32. Any parse error, truncation or CRC mismatch is
 *   archive_corrupt. Errors thrown by the callback are passed through unchanged.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { extract as tarExtract, type Header as TarHeader } from 'tar-stream';
import yauzl, { type Entry as ZipEntry, type ZipFile } from 'yauzl';
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

type OnEntry = (e: ArchiveEntry) => Promise<void>;

export function detectArchiveFormat(head: Buffer): ArchiveFormat | null {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b) {
    if (head[2] === 0x03 && head[3] === 0x04) return 'zip';
    if (head[2] === 0x05 && head[3] === 0x06) return 'zip'; // empty zip: only the end record
  }
  return null;
}

/** Reads the archive at `file` (a path on disk) and calls onEntry for each file/symlink, in archive order. */
export async function readArchive(
  file: string,
  format: ArchiveFormat,
  limits: ArchiveLimits,
  onEntry: (e: ArchiveEntry) => Promise<void>,
): Promise<ArchiveSummary> {
  return walk(file, format, limits, onEntry);
}

/** Validates without keeping data (used at upload time): same checks, entries discarded. */
export async function scanArchive(
  file: string,
  format: ArchiveFormat,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<ArchiveSummary> {
  return walk(file, format, limits, null);
}

async function walk(
  file: string,
  format: ArchiveFormat,
  limits: ArchiveLimits,
  onEntry: OnEntry | null,
): Promise<ArchiveSummary> {
  // A missing or unreadable file is the caller's problem, not a corrupt archive: let it through.
  const archiveBytes = (await stat(file)).size;
  const walker = new Walker(limits, archiveBytes, onEntry);
  switch (format) {
    case 'tar.gz':
      await readTarGz(file, walker);
      break;
    case 'zip':
      await readZip(file, walker);
      break;
    default:
      throw new TypeError(`unknown archive format: ${String(format satisfies never)}`);
  }
  return walker.finish();
}

// ---------------------------------------------------------------------------------------------
// Checks and bookkeeping shared by both formats.

/** An error thrown by the caller's onEntry: passed through as it is, never called corrupt. */
class CallbackFailure {
  constructor(readonly error: unknown) {}
}

const q = (s: string) => JSON.stringify(s);

function corrupt(reason: string, details: Record<string, unknown> = {}): SourceError {
  return new SourceError('archive_corrupt', `archive is corrupt or truncated: ${reason}`, details);
}

/**
 * The error to report: ours (a refusal or the callback's) before any library error, which is
 * archive_corrupt, naming the entry being read when there is one.
 */
function settle(current: string, ...errors: unknown[]): never {
  for (const err of errors) if (err instanceof CallbackFailure) throw err.error;
  for (const err of errors) if (err instanceof SourceError) throw err;
  const first = errors.find((e) => e !== undefined);
  const cause = first instanceof Error ? first.message : String(first);
  throw current === ''
    ? corrupt(cause, { cause })
    : corrupt(`${cause} (at entry ${q(current)})`, { path: current, cause });
}

function isAbsolute(slashed: string): boolean {
  return slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed);
}

/** Checks and normalises an entry name; '' is the root itself. */
function normalisePath(raw: string): string {
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

function unsupported(path: string, type: string, extra = ''): SourceError {
  return new SourceError(
    'archive_unsupported_entry',
    `archive entry ${q(path)} is a ${type}, which is not supported${extra}`,
    { path, type },
  );
}

function outsideRoot(path: string, target: string, kind: string, why: string): SourceError {
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

class Walker {
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

// ---------------------------------------------------------------------------------------------
// tar.gz: file -> gunzip -> meter (ratio) -> tar-stream extract, entries pulled one at a time.

async function readTarGz(file: string, walker: Walker): Promise<void> {
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        walker.inflate(chunk.length);
      } catch (err) {
        callback(err as Error);
        return;
      }
      callback(null, chunk);
    },
  });
  const extract = tarExtract();
  // The pipeline destroys every stream on the first error. Its rejection is caught at once (not
  // only when awaited below), so that it can never count as an unhandled rejection.
  const piping: Promise<unknown> = pipeline(
    createReadStream(file),
    zlib.createGunzip(),
    meter,
    extract,
  ).then(
    () => undefined,
    (err: unknown) => err ?? new Error('tar stream failed'),
  );
  let failure: unknown;
  try {
    for await (const entry of extract) {
      // tar-stream's entry streams are streamx Readables, which yield the Buffers of the data.
      await tarEntry(
        walker,
        entry.header,
        entry as AsyncIterable<unknown> as AsyncIterable<Buffer>,
      );
      walker.current = '';
    }
  } catch (err) {
    failure = err ?? new Error('tar extraction failed');
    extract.destroy();
  }
  const pipeFailure = await piping;
  if (failure !== undefined || pipeFailure !== undefined)
    settle(walker.current, failure, pipeFailure);
}

async function drain(stream: AsyncIterable<Buffer>): Promise<void> {
  // Discarded: the ratio meter upstream has counted it.
  for await (const chunk of stream) void chunk;
}

async function tarEntry(walker: Walker, header: TarHeader, data: AsyncIterable<Buffer>) {
  walker.current = header.name;
  const path = normalisePath(header.name);
  walker.current = path;
  // At run time tar-stream gives a null type for typeflags it does not know, and may give
  // null or undefined fields where its types say otherwise.
  const type: string = (header.type as string | null) ?? 'unknown';
  switch (type) {
    case 'directory':
      return drain(data);
    case 'file':
    case 'contiguous-file':
      // Old tars mark directories with a trailing slash on a regular-file header.
      if (header.name.endsWith('/') || header.name.endsWith('\\')) return drain(data);
      return walker.file(path, (header.mode ?? 0o644) & 0o7777, header.size ?? 0, data);
    case 'symlink':
      await drain(data);
      return walker.symlink(path, (header.linkname as string | null) ?? '');
    case 'link': {
      const target = (header.linkname as string | null) ?? '';
      const slashed = target.replace(/\\/g, '/');
      if (isAbsolute(slashed)) throw outsideRoot(path, target, 'hard link', 'is absolute');
      // A hard link's target is a path from the archive root, not from the link's directory.
      const resolved = posix.normalize(slashed);
      if (resolved === '..' || resolved.startsWith('../')) {
        throw outsideRoot(path, target, 'hard link', 'resolves outside the root');
      }
      throw unsupported(
        path,
        'hard link',
        ` (target ${q(target)}; re-create the archive with tar --hard-dereference)`,
      );
    }
    default:
      // character-device, block-device, fifo, and types tar-stream does not know (GNU sparse
      // files, volume labels, dump directories...).
      throw unsupported(path, type === 'unknown' ? 'tar entry of an unknown type' : type);
  }
}

// ---------------------------------------------------------------------------------------------
// zip: yauzl, central directory order, one entry and one read stream at a time.

const S_IFMT = 0o170000;
const ZIP_TYPES: Record<number, string> = {
  0o010000: 'fifo',
  0o020000: 'character-device',
  0o060000: 'block-device',
  0o140000: 'socket',
};

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file,
      {
        lazyEntries: true,
        autoClose: true,
        validateEntrySizes: true,
        strictFileNames: false,
        decodeStrings: true,
      },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

function nextZipEntry(zip: ZipFile): Promise<ZipEntry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: ZipEntry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/**
 * yauzl (decodeStrings) refuses absolute and '..' names itself, with a plain Error naming the
 * entry: turn those into our own refusals.
 */
function zipNameError(err: unknown): unknown {
  const match =
    err instanceof Error
      ? /^(?:absolute path|invalid relative path|invalid characters in fileName): ([\s\S]*)$/.exec(
          err.message,
        )
      : null;
  if (match) {
    try {
      normalisePath(match[1]!);
    } catch (refusal) {
      return refusal;
    }
  }
  return err;
}

/** The entry's inflated bytes, counted against the ratio as they come. */
async function* zipData(
  zip: ZipFile,
  entry: ZipEntry,
  walker: Walker,
): AsyncGenerator<Buffer, void, undefined> {
  const stream = await zip.openReadStreamPromise(entry);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      walker.inflate(chunk.length);
      yield chunk;
    }
  } finally {
    // Stops yauzl's read and inflate streams when we leave early (refusal or callback error).
    stream.destroy();
  }
}

async function readZip(file: string, walker: Walker): Promise<void> {
  let zip: ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    settle('', err);
  }
  // yauzl emits at most one 'error'; keep a listener for the whole life of the ZipFile so that
  // none can go unhandled between two reads.
  zip.on('error', () => {});
  try {
    for (;;) {
      let entry: ZipEntry | null;
      try {
        entry = await nextZipEntry(zip);
      } catch (err) {
        throw zipNameError(err);
      }
      if (!entry) break;
      await zipEntry(zip, entry, walker);
      walker.current = '';
    }
  } catch (err) {
    settle(walker.current, err);
  } finally {
    zip.close();
  }
}

async function zipEntry(zip: ZipFile, entry: ZipEntry, walker: Walker): Promise<void> {
  const name = entry.fileName;
  walker.current = name;
  const path = normalisePath(name);
  walker.current = path;
  const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const type = unixMode & S_IFMT;
  if (name.endsWith('/') || type === 0o040000) return; // a directory
  if (type !== 0 && type !== 0o100000 && type !== 0o120000) {
    throw unsupported(path, ZIP_TYPES[type] ?? `zip entry of unix type 0o${type.toString(8)}`);
  }
  if (entry.isEncrypted()) throw unsupported(path, 'encrypted zip entry');
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw unsupported(path, `zip entry compressed with method ${entry.compressionMethod}`);
  }
  if (type === 0o120000) {
    if (entry.uncompressedSize > MAX_PATH_BYTES) {
      throw unsupported(path, `symlink whose target is longer than ${MAX_PATH_BYTES} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of zipData(zip, entry, walker)) {
      size += chunk.length;
      if (size > MAX_PATH_BYTES) {
        throw unsupported(path, `symlink whose target is longer than ${MAX_PATH_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    const target = Buffer.concat(chunks, size);
    if (zlib.crc32(target) >>> 0 !== entry.crc32 >>> 0) {
      throw corrupt(`symlink ${q(path)} fails its CRC-32 check`, { path });
    }
    return walker.symlink(path, target.toString('utf8'));
  }
  const mode = unixMode & 0o7777 || 0o644;
  return walker.file(path, mode, entry.uncompressedSize, zipData(zip, entry, walker), {
    crc32: entry.crc32 >>> 0,
  });
}
