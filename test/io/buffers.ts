import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Clock } from '../../src/clock.js';
import type { SignalSource } from '../../src/interrupt.js';
import { type Context, type ContextParts, createContext, type GlobalOptions } from '../../src/context.js';

/** A Writable collecting what is written, with the TTY facts the output layer reads. */
export class BufferStream extends Writable {
  chunks: string[] = [];
  isTTY: boolean;
  columns?: number;

  constructor(tty = false, columns?: number) {
    super();
    this.isTTY = tty;
    this.columns = columns;
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    done();
  }

  /** The cursor methods of a tty.WriteStream that ora calls; each writes its escape sequence. */
  cursorTo(x: number, y?: number | (() => void)): boolean {
    return this.write(typeof y === 'number' ? `\u001b[${y + 1};${x + 1}H` : `\u001b[${x + 1}G`);
  }

  moveCursor(_dx: number, dy: number): boolean {
    return this.write(`\u001b[${-dy}A`);
  }

  clearLine(): boolean {
    return this.write('\u001b[2K');
  }

  get text(): string {
    return this.chunks.join('');
  }
}

let cacheHome: string | undefined;

/** A test context: buffer stdout/stderr (TTY or not), given env and stdin text, globals set by hand. */
export function testContext(opts: { tty?: boolean; errTty?: boolean; env?: Record<string, string | undefined>; stdin?: string; quiet?: boolean; globals?: GlobalOptions; clock?: Clock; signals?: SignalSource } = {}): {
  ctx: Context;
  /** The same streams and env as parts for main(argv, parts). */
  parts: ContextParts;
  stdout: BufferStream;
  stderr: BufferStream;
} {
  const stdout = new BufferStream(opts.tty ?? false, opts.tty ? 100 : undefined);
  const stderr = new BufferStream(opts.errTty ?? false, opts.errTty ? 100 : undefined);
  const parts: ContextParts = {
    stdout,
    stderr,
    stdin: Readable.from([Buffer.from(opts.stdin ?? '')]),
    // A temporary cache home: a test that fetches a schema never writes the real ~/.cache.
    env: { NO_COLOR: '1', XDG_CACHE_HOME: (cacheHome ??= mkdtempSync(join(tmpdir(), 'cardboard-cache-'))), ...opts.env },
  };
  const ctx = createContext({ ...parts, clock: opts.clock, signals: opts.signals, globals: { quiet: opts.quiet, ...opts.globals } });
  return { ctx, parts, stdout, stderr };
}
