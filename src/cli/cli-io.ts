/** Where commands write; tests pass their own to capture output. */
export interface CliIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

export const processIo: CliIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** A command's failure that is the user's to fix: printed as one line, exit code attached. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** sysexits.h: EX_USAGE for bad arguments, EX_CONFIG for bad configuration. */
export const EXIT_USAGE = 64;
export const EXIT_CONFIG = 78;
/**
 * sysexits.h's EX_DATAERR: the database's schema is a newer release's. Its own code, so that a
 * process manager or a deploy script tells it from a bad config: retrying cannot help, a roll-back can.
 */
export const EXIT_NEWER_SCHEMA = 65;
/** sysexits.h's EX_TEMPFAIL: another process was doing the same work (a retention pass); trying again later will do. */
export const EXIT_TEMPFAIL = 75;

/** A database URL fit to print: a password in it is replaced. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:[redacted]@');
}
