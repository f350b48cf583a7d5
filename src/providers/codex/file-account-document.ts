import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AccountDocument } from '../provider-adapter.js';

/**
 * An account's auth.json on disk. Writes are atomic: a new file of mode 0600 beside it, synced,
 * then renamed over it, so a crash or a reader at the wrong moment never sees half a file, and the
 * tokens are never readable by others.
 */
export class FileAccountDocument implements AccountDocument {
  readonly description: string;

  constructor(private readonly path: string) {
    this.description = `auth file ${path}`;
  }

  async read(): Promise<string> {
    try {
      return await readFile(this.path, 'utf8');
    } catch (error) {
      throw new Error(`${this.path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }

  async write(text: string): Promise<void> {
    const temporary = join(dirname(this.path), `.${basename(this.path)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } catch (error) {
      await handle.close();
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    await handle.close();
    try {
      await rename(temporary, this.path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }
}
