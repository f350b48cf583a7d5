/**
 * The few WASI preview1 calls the Flite command-line program makes, served from memory.
 *
 * Why not `node:wasi`: it needs a real directory for Flite's output file (temp files from a worker
 * thread), prints an ExperimentalWarning, and on Node 20 it crashed the whole process (segfault or
 * V8 fatal error, not a catchable exception) once Flite appended several utterances to a ~2 MB wave
 * file. Flite only needs argv, a clock, stdout/stderr and one output file in one pre-opened
 * directory, so a small in-memory implementation is simpler and keeps a crash inside the sandbox.
 */

import { webAssembly, type WebAssemblyMemory, type WebAssemblyModule } from './web-assembly.js';

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;
const ERRNO_NOENT = 44;

const FILETYPE_CHARACTER_DEVICE = 2;
const FILETYPE_DIRECTORY = 3;
const FILETYPE_REGULAR_FILE = 4;

const OPEN_FLAG_CREATE = 1;
const OPEN_FLAG_TRUNCATE = 8;
const FD_FLAG_APPEND = 1;

const WHENCE_SET = 0;
const WHENCE_CURRENT = 1;
const WHENCE_END = 2;

const STDOUT = 1;
const STDERR = 2;
const PREOPENED_DIRECTORY_FD = 3;
const ALL_RIGHTS = 0xffff_ffffn;
/** Diagnostics are only kept to explain a failure; cap them so a chatty run cannot grow memory. */
const MAX_CAPTURED_OUTPUT_BYTES = 16 * 1024;

/** Thrown by proc_exit to unwind out of `_start`; caught in {@link runWasiCommand}. */
class ProcessExit {
  constructor(readonly code: number) {}
}

class GrowableFile {
  private buffer = new Uint8Array(64 * 1024);
  length = 0;

  read(position: number, target: Uint8Array): number {
    const count = Math.max(0, Math.min(target.length, this.length - position));
    target.set(this.buffer.subarray(position, position + count));
    return count;
  }

  write(position: number, source: Uint8Array): void {
    const end = position + source.length;
    if (end > this.buffer.length) {
      const grown = new Uint8Array(Math.max(end, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    if (position > this.length) this.buffer.fill(0, this.length, position);
    this.buffer.set(source, position);
    this.length = Math.max(this.length, end);
  }

  truncate(): void {
    this.length = 0;
  }

  contents(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

interface OpenFile {
  file: GrowableFile;
  position: number;
  append: boolean;
}

export interface WasiCommandOptions {
  /** argv[0] onwards; argv[0] is the program name. */
  args: readonly string[];
  /** The name the program sees for its single pre-opened directory, e.g. '/out'. */
  directoryName: string;
}

export interface WasiCommandResult {
  exitCode: number;
  /** Files the program created in the pre-opened directory, by path relative to it. */
  files: ReadonlyMap<string, Uint8Array>;
  /** Whatever the program wrote to stdout and stderr (truncated), for diagnostics. */
  output: string;
}

/** Instantiates `module` afresh (a WASI command's `_start` runs once per instance) and runs it. */
export async function runWasiCommand(module: WebAssemblyModule, options: WasiCommandOptions): Promise<WasiCommandResult> {
  const encoder = new TextEncoder();
  const encodedArgs = options.args.map((argument) => encoder.encode(`${argument}\0`));
  const encodedDirectoryName = encoder.encode(options.directoryName);
  const files = new Map<string, GrowableFile>();
  const openFiles = new Map<number, OpenFile>();
  const outputChunks: Uint8Array[] = [];
  let capturedOutputBytes = 0;
  let nextFd = PREOPENED_DIRECTORY_FD + 1;
  let memory: WebAssemblyMemory | undefined;

  // The memory buffer is replaced whenever the module grows its memory, so views are made per call.
  const view = (): DataView => new DataView(requireMemory().buffer);
  const bytes = (pointer: number, length: number): Uint8Array => new Uint8Array(requireMemory().buffer, pointer, length);
  function requireMemory(): WebAssemblyMemory {
    if (memory === undefined) throw new Error('WASI memory used before start');
    return memory;
  }

  function captureOutput(chunk: Uint8Array): void {
    if (capturedOutputBytes >= MAX_CAPTURED_OUTPUT_BYTES) return;
    const kept = chunk.slice(0, MAX_CAPTURED_OUTPUT_BYTES - capturedOutputBytes);
    outputChunks.push(kept);
    capturedOutputBytes += kept.length;
  }

  function forEachIovec(iovecsPointer: number, iovecsLength: number, visit: (pointer: number, length: number) => number): number {
    let total = 0;
    for (let index = 0; index < iovecsLength; index += 1) {
      const pointer = view().getUint32(iovecsPointer + index * 8, true);
      const length = view().getUint32(iovecsPointer + index * 8 + 4, true);
      const done = visit(pointer, length);
      total += done;
      if (done < length) break;
    }
    return total;
  }

  const imports = {
    args_sizes_get(countPointer: number, bufferSizePointer: number): number {
      view().setUint32(countPointer, encodedArgs.length, true);
      const size = encodedArgs.reduce((sum, argument) => sum + argument.length, 0);
      view().setUint32(bufferSizePointer, size, true);
      return ERRNO_SUCCESS;
    },
    args_get(argvPointer: number, bufferPointer: number): number {
      let offset = bufferPointer;
      encodedArgs.forEach((argument, index) => {
        view().setUint32(argvPointer + index * 4, offset, true);
        bytes(offset, argument.length).set(argument);
        offset += argument.length;
      });
      return ERRNO_SUCCESS;
    },
    clock_time_get(_clockId: number, _precision: bigint, timePointer: number): number {
      const nanoseconds = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
      view().setBigUint64(timePointer, nanoseconds, true);
      return ERRNO_SUCCESS;
    },
    fd_close(fd: number): number {
      return openFiles.delete(fd) ? ERRNO_SUCCESS : ERRNO_BADF;
    },
    fd_fdstat_get(fd: number, statPointer: number): number {
      let fileType: number;
      if (fd <= STDERR) fileType = FILETYPE_CHARACTER_DEVICE;
      else if (fd === PREOPENED_DIRECTORY_FD) fileType = FILETYPE_DIRECTORY;
      else if (openFiles.has(fd)) fileType = FILETYPE_REGULAR_FILE;
      else return ERRNO_BADF;
      view().setUint8(statPointer, fileType);
      view().setUint16(statPointer + 2, 0, true);
      view().setBigUint64(statPointer + 8, ALL_RIGHTS, true);
      view().setBigUint64(statPointer + 16, ALL_RIGHTS, true);
      return ERRNO_SUCCESS;
    },
    fd_fdstat_set_flags(): number {
      return ERRNO_SUCCESS;
    },
    fd_prestat_get(fd: number, prestatPointer: number): number {
      if (fd !== PREOPENED_DIRECTORY_FD) return ERRNO_BADF;
      view().setUint8(prestatPointer, 0);
      view().setUint32(prestatPointer + 4, encodedDirectoryName.length, true);
      return ERRNO_SUCCESS;
    },
    fd_prestat_dir_name(fd: number, pathPointer: number, pathLength: number): number {
      if (fd !== PREOPENED_DIRECTORY_FD) return ERRNO_BADF;
      bytes(pathPointer, pathLength).set(encodedDirectoryName.subarray(0, pathLength));
      return ERRNO_SUCCESS;
    },
    fd_read(fd: number, iovecsPointer: number, iovecsLength: number, readPointer: number): number {
      const open = openFiles.get(fd);
      let total = 0;
      if (open !== undefined) {
        total = forEachIovec(iovecsPointer, iovecsLength, (pointer, length) => {
          const count = open.file.read(open.position, bytes(pointer, length));
          open.position += count;
          return count;
        });
      } else if (fd !== 0) {
        return ERRNO_BADF;
      }
      view().setUint32(readPointer, total, true);
      return ERRNO_SUCCESS;
    },
    fd_seek(fd: number, offset: bigint, whence: number, newOffsetPointer: number): number {
      const open = openFiles.get(fd);
      if (open === undefined) return ERRNO_BADF;
      let base: number;
      if (whence === WHENCE_SET) base = 0;
      else if (whence === WHENCE_CURRENT) base = open.position;
      else if (whence === WHENCE_END) base = open.file.length;
      else return ERRNO_INVAL;
      const position = base + Number(offset);
      if (position < 0) return ERRNO_INVAL;
      open.position = position;
      view().setBigUint64(newOffsetPointer, BigInt(position), true);
      return ERRNO_SUCCESS;
    },
    fd_write(fd: number, iovecsPointer: number, iovecsLength: number, writtenPointer: number): number {
      const open = openFiles.get(fd);
      if (open === undefined && fd !== STDOUT && fd !== STDERR) return ERRNO_BADF;
      const total = forEachIovec(iovecsPointer, iovecsLength, (pointer, length) => {
        const chunk = bytes(pointer, length);
        if (open === undefined) {
          captureOutput(chunk);
        } else {
          if (open.append) open.position = open.file.length;
          open.file.write(open.position, chunk);
          open.position += length;
        }
        return length;
      });
      view().setUint32(writtenPointer, total, true);
      return ERRNO_SUCCESS;
    },
    path_open(
      directoryFd: number,
      _lookupFlags: number,
      pathPointer: number,
      pathLength: number,
      openFlags: number,
      _rightsBase: bigint,
      _rightsInheriting: bigint,
      fdFlags: number,
      openedFdPointer: number,
    ): number {
      if (directoryFd !== PREOPENED_DIRECTORY_FD) return ERRNO_BADF;
      const path = new TextDecoder().decode(bytes(pathPointer, pathLength));
      let file = files.get(path);
      if (file === undefined) {
        if ((openFlags & OPEN_FLAG_CREATE) === 0) return ERRNO_NOENT;
        file = new GrowableFile();
        files.set(path, file);
      } else if ((openFlags & OPEN_FLAG_TRUNCATE) !== 0) {
        file.truncate();
      }
      const fd = nextFd;
      nextFd += 1;
      openFiles.set(fd, { file, position: 0, append: (fdFlags & FD_FLAG_APPEND) !== 0 });
      view().setUint32(openedFdPointer, fd, true);
      return ERRNO_SUCCESS;
    },
    proc_exit(code: number): never {
      throw new ProcessExit(code);
    },
  };

  const instance = await webAssembly.instantiate(module, { wasi_snapshot_preview1: imports });
  const exportedMemory = instance.exports['memory'];
  const start = instance.exports['_start'];
  if (!(exportedMemory instanceof webAssembly.Memory) || typeof start !== 'function') {
    throw new Error('module is not a WASI command (no memory or _start export)');
  }
  memory = exportedMemory;

  let exitCode = 0;
  try {
    (start as () => void)();
  } catch (error) {
    if (!(error instanceof ProcessExit)) throw error;
    exitCode = error.code;
  }

  const output = new TextDecoder().decode(concatenate(outputChunks));
  const result = new Map<string, Uint8Array>();
  for (const [path, file] of files) result.set(path, file.contents());
  return { exitCode, files: result, output };
}

function concatenate(chunks: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}
