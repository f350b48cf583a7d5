import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface DiscoveredGgufModel {
  /** Lowercase, [a-z0-9._-] only: safe to put in a model name such as `local/<id>`. */
  id: string;
  /** The file to load: the only file, or the first part of a split model. */
  path: string;
  /** All parts together. */
  sizeBytes: number;
}

const splitPartPattern = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;
const ggufExtensionPattern = /\.gguf$/i;

/**
 * Lists the GGUF models an operator dropped into `modelsDirectory`: files directly inside it and
 * files one folder down (the layout a downloaded model repository leaves, `models/<repo>/<file>`).
 * A split model (`name-00001-of-00003.gguf`, …) counts once, and only when every part is there.
 * Files that are unreadable or are not GGUF (checked by their magic bytes) are skipped, and so are
 * multimodal projector files (`mmproj-*.gguf`), which are not chat models. A missing directory
 * yields an empty list. When two files would get the same id, the first by path wins.
 */
export function discoverGgufModels(modelsDirectory: string): DiscoveredGgufModel[] {
  const candidates = listGgufFiles(modelsDirectory).sort((left, right) => left.localeCompare(right));
  const byId = new Map<string, DiscoveredGgufModel>();
  const allFiles = new Set(candidates);
  for (const path of candidates) {
    const model = describeModel(path, allFiles);
    if (model !== null && !byId.has(model.id)) byId.set(model.id, model);
  }
  return [...byId.values()].sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
}

export function ggufModelId(fileName: string): string {
  const stem = fileName.replace(ggufExtensionPattern, '').toLowerCase();
  return stem.replace(/[^a-z0-9._-]/g, '-');
}

function listGgufFiles(modelsDirectory: string): string[] {
  const files: string[] = [];
  for (const entry of readDirectory(modelsDirectory)) {
    const path = join(modelsDirectory, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith('.')) {
      for (const inner of readDirectory(path)) {
        if (isGgufFileEntry(inner)) files.push(join(path, inner.name));
      }
    } else if (isGgufFileEntry(entry)) {
      files.push(path);
    }
  }
  return files;
}

interface DirectoryEntry {
  name: string;
  isDirectory(): boolean;
  isFile(): boolean;
  isSymbolicLink(): boolean;
}

function readDirectory(directory: string): DirectoryEntry[] {
  try {
    return readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
}

function isGgufFileEntry(entry: DirectoryEntry): boolean {
  if (!ggufExtensionPattern.test(entry.name) || entry.name.startsWith('.')) return false;
  if (entry.name.toLowerCase().startsWith('mmproj')) return false;
  // Symbolic links are common when models live on another disk; statSync below follows them.
  return entry.isFile() || entry.isSymbolicLink();
}

function describeModel(path: string, allFiles: Set<string>): DiscoveredGgufModel | null {
  const fileName = basename(path);
  const directory = dirname(path);
  const split = splitPartPattern.exec(fileName);
  if (split === null) {
    const size = readableGgufSize(path);
    return size === null ? null : { id: ggufModelId(fileName), path, sizeBytes: size };
  }
  const [, baseName = '', partText = '', countText = ''] = split;
  // Later parts are accounted for when the first part is seen.
  if (Number(partText) !== 1) return null;
  const partCount = Number(countText);
  let sizeBytes = 0;
  for (let part = 1; part <= partCount; part += 1) {
    const partPath = join(directory, `${baseName}-${String(part).padStart(5, '0')}-of-${countText}.gguf`);
    const size = allFiles.has(partPath) ? readableGgufSize(partPath) : null;
    if (size === null) return null;
    sizeBytes += size;
  }
  return { id: ggufModelId(baseName), path, sizeBytes };
}

/** The file's size when it is a readable regular file that starts with the GGUF magic, else null. */
function readableGgufSize(path: string): number | null {
  let descriptor: number | null = null;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) return null;
    descriptor = openSync(path, 'r');
    const magic = Buffer.alloc(4);
    const bytesRead = readSync(descriptor, magic, 0, 4, 0);
    return bytesRead === 4 && magic.toString('latin1') === 'GGUF' ? stats.size : null;
  } catch {
    return null;
  } finally {
    if (descriptor !== null) closeSync(descriptor);
  }
}
