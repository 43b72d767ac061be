/**
 * Content-addressed blob store on a filesystem shared by the API and the workers (a volume in
 * docker-compose). Blobs are named by their SHA-256 and written atomically (temp file + rename),
 * so concurrent writers of the same content are harmless and identical files are stored once.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';

export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`blob exceeds ${limit} bytes`);
  }
}

export class BlobStore {
  constructor(readonly root: string) {}

  pathOf(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  private tempPath(): string {
    const dir = path.join(this.root, 'tmp');
    fs.mkdirSync(dir, { recursive: true });
    return path.join(dir, `${process.pid}-${crypto.randomUUID()}`);
  }

  private async commit(temp: string, sha256: string): Promise<void> {
    const final = this.pathOf(sha256);
    await fs.promises.mkdir(path.dirname(final), { recursive: true });
    await fs.promises.rename(temp, final);
  }

  /** Stores bytes; returns their SHA-256. */
  async put(data: Buffer): Promise<string> {
    const sha256 = crypto.createHash('sha256').update(data).digest('hex');
    if (fs.existsSync(this.pathOf(sha256))) return sha256;
    const temp = this.tempPath();
    await fs.promises.writeFile(temp, data);
    await this.commit(temp, sha256);
    return sha256;
  }

  /** Streams into the store, hashing on the way; refuses more than `limit` bytes. */
  async putStream(source: Readable, limit: number): Promise<{ sha256: string; size: number }> {
    const staged = await this.stageStream(source, limit);
    await this.commitStaged(staged);
    return { sha256: staged.sha256, size: staged.size };
  }

  /**
   * Streams into a temporary file, not yet visible in the store: content that may be refused
   * (an upload being checked) must never replace or delete a blob others rely on.
   */
  async stageStream(
    source: Readable,
    limit: number,
  ): Promise<{ temp: string; sha256: string; size: number }> {
    const temp = this.tempPath();
    const hash = crypto.createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > limit) return done(new BlobTooLargeError(limit));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, fs.createWriteStream(temp));
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    return { temp, sha256: hash.digest('hex'), size };
  }

  /** Makes a staged file a blob (or drops it when the blob already exists). */
  async commitStaged(staged: { temp: string; sha256: string }): Promise<void> {
    if (fs.existsSync(this.pathOf(staged.sha256)))
      await fs.promises.rm(staged.temp, { force: true });
    else await this.commit(staged.temp, staged.sha256);
  }

  async discardStaged(staged: { temp: string }): Promise<void> {
    await fs.promises.rm(staged.temp, { force: true });
  }

  async get(sha256: string): Promise<Buffer> {
    return fs.promises.readFile(this.pathOf(sha256));
  }

  /** Removes a blob (no error when it is already gone). Callers check nobody holds it. */
  async remove(sha256: string): Promise<void> {
    await fs.promises.rm(this.pathOf(sha256), { force: true });
  }

  has(sha256: string): boolean {
    return fs.existsSync(this.pathOf(sha256));
  }
}
