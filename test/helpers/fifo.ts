import { execFileSync } from 'node:child_process';
import { closeSync, constants, createReadStream, openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Wait until something has opened the FIFO at `path` for reading, and return a writer's descriptor that keeps
 * it open: a reader whose open is still waiting counts as one (a non-blocking open for writing then succeeds),
 * and while this descriptor is open the reader sees no end of file. Close it once the writer under test has
 * opened the FIFO (or been refused). A budget for hangs only.
 */
export async function holdReader(path: string, budgetMs = 60_000): Promise<number> {
  const until = Date.now() + budgetMs;
  for (;;) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO' || Date.now() > until) throw err;
    }
    await sleep(10);
  }
}

/** A FIFO made with `mode`. */
export function makeFifo(dir: string, name: string, mode = '0644'): string {
  const path = join(dir, name);
  execFileSync('mkfifo', ['-m', mode, path]);
  return path;
}

/** A FIFO (mode 0644) with a reader in this process that is known to be there (holdReader). */
export interface ReadFifo {
  path: string;
  /** Let the reader see the end (once the writer under test is done) and resolve to what it read. */
  text(): Promise<string>;
  /** End the reader whatever happened (for `finally`). */
  release(): void;
}

export async function fifoWithReader(dir: string, name = 'out.fifo'): Promise<ReadFifo> {
  const path = makeFifo(dir, name);
  const chunks: Buffer[] = [];
  const stream = createReadStream(path);
  const done = new Promise<string>((resolve, reject) => {
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
  let holder: number | undefined = await holdReader(path);
  const release = () => {
    if (holder !== undefined) closeSync(holder);
    holder = undefined;
  };
  return {
    path,
    text() {
      release();
      return done;
    },
    release,
  };
}
