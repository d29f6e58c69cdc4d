// The listener's --record file: one listener per file (a lock beside it), a file of deliveries or nothing, opened
// with errors that name it.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../clock.js';
import { UsageError } from '../errors.js';
import { FileLock } from '../file-lock.js';
import { requireRegularFile } from '../private-file.js';
import { RecordFile, requireRecordFile } from './record-file.js';

/** One listener per record file: the lock is `<record>.lock`, beside it (its start time read on `clock`). */
export async function lockRecord(path: string, clock: Clock): Promise<FileLock> {
  if (!existsSync(dirname(path))) throw new UsageError(`--record: cannot open ${path} (ENOENT)`);
  // Refused before the lock is made beside it: --record /dev/null would put the lock in /dev, and a file of other
  // content (notes.txt, or a symlink to it) gets nothing written beside it or into it.
  requireRegularFile(path, '--record');
  requireRecordFile(path);
  return FileLock.acquire(`${path}.lock`, {
    clock,
    refuse: (who, lockPath) =>
      new UsageError(`--record ${path} is in use by another webhook listener: ${who}.`, {
        hint: `Give this listener its own --record file. If that process is gone, delete ${lockPath} and start again.`,
      }),
  });
}

/** The record file opened for appending; why it cannot be is a usage error naming it (exit 2). */
export function openRecord(path: string): RecordFile {
  try {
    return new RecordFile(path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--record: cannot open ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
}
