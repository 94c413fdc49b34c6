// Where commands write: one function per stream, so tests can capture them.
import { writeStderr, writeStdout } from '../core/platform.ts';

export interface Io {
  /** Writes a line (or lines) to standard output. */
  out(text: string): void;
  /** Writes a line to standard error. */
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => writeStdout(`${text}\n`),
  err: (text) => writeStderr(`${text}\n`),
};
