// Outputs that are the input: `--results` or `--rejects` naming the input truncated
// it mid-run. The paths are compared as files, not strings, so a symlink or a hard link counts too.
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { requireRegularFile } from '../private-file.js';

/** What identifies a file: its inode when it exists, else the real path it would be created at. */
function identity(path: string): string {
  try {
    const s = statSync(path);
    return `inode:${s.dev}:${s.ino}`;
  } catch {
    try {
      return `path:${join(realpathSync(dirname(resolve(path))), basename(path))}`;
    } catch {
      return `path:${resolve(path)}`;
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Refuse (exit 2, before any request) an output that is a directory, a --journal that is not a regular file, and outputs that resolve to the input or to each other. */
export function checkOutputPaths(input: string, outputs: { flag: string; path: string | undefined }[]): void {
  const seen = new Map<string, string>();
  if (input !== '-') seen.set(identity(input), `the input ${input}`);
  for (const { flag, path } of outputs) {
    if (path === undefined) continue;
    if (isDirectory(path)) {
      throw new UsageError(`${flag} ${path} is a directory; it names the file to write. Nothing was sent.`, {
        hint: `Pass ${flag} with a file path, e.g. ${flag} ${join(path, flag === '--journal' ? 'import.journal' : `${flag.slice(2)}.csv`)}.`,
      });
    }
    // The journal is read back and appended: a FIFO or a device in its place is refused before the lock is made beside it.
    if (flag === '--journal') requireRegularFile(path, flag);
    const id = identity(path);
    const other = seen.get(id);
    if (other !== undefined) {
      throw new UsageError(`${flag} ${path} is ${other}: it would be overwritten. Nothing was sent.`, {
        hint: 'Give each of the input, --results, --rejects and --journal a file of its own.',
      });
    }
    seen.set(id, `${flag} ${path}`);
  }
}
