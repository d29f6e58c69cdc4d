// File-system errors a user can fix (a path that is a directory, a directory not writable, a parent that is
// a file) become one UsageError naming the path and the flag or variable that moves the file, instead of a
// stack trace. Every place that opens or creates a file of cardboard's own goes through fileError.
import { UsageError } from './errors.js';

/** What each errno means to a user; other codes are not the user's to fix and stay as they are. */
const REASONS = new Map<string, string>([
  ['EACCES', 'permission denied'],
  ['EPERM', 'operation not permitted (owned by another user?)'],
  ['EISDIR', 'it is a directory'],
  ['ENOTDIR', 'a part of the path is not a directory'],
  ['EROFS', 'read-only file system'],
  ['ENOENT', 'no such file or directory'],
  ['EEXIST', 'a file of that name is in the way'],
  ['ENOSPC', 'no space left on the device'],
  ['ENAMETOOLONG', 'the name is too long'],
]);

/** Where the file is and how to move it: `hint` names the flag or environment variable. */
interface FileUse {
  /** What cardboard was doing, e.g. "create the journal directory". */
  action: string;
  path: string;
  /** e.g. "Pass --journal <path> to keep the journal elsewhere." */
  hint: string;
}

/** The errno code of a Node file-system error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A UsageError (exit 2) for a file-system error the user can fix: the action, the path (and the path the
 * system refused, when another), the reason and the hint. Any other error is returned unchanged.
 */
export function fileError(err: unknown, use: FileUse): unknown {
  const code = errnoCode(err);
  const reason = code === undefined ? undefined : REASONS.get(code);
  if (reason === undefined) return err;
  const at = (err as NodeJS.ErrnoException).path;
  const where = at && at !== use.path ? ` (at ${at})` : '';
  return new UsageError(`Cannot ${use.action} ${use.path}${where}: ${reason} (${code}).`, { hint: use.hint, cause: err });
}
