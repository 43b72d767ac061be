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
import { stat } from 'node:fs/promises';
import { readTarGz } from './archive-tar';
import {
  DEFAULT_ARCHIVE_LIMITS,
  Walker,
  type ArchiveEntry,
  type ArchiveFormat,
  type ArchiveLimits,
  type ArchiveSummary,
  type OnEntry,
} from './archive-walker';
import { readZip } from './archive-zip';

export {
  DEFAULT_ARCHIVE_LIMITS,
  MAX_PATH_BYTES,
  RATIO_GRACE_BYTES,
  type ArchiveEntry,
  type ArchiveFormat,
  type ArchiveLimits,
  type ArchiveSummary,
} from './archive-walker';

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
