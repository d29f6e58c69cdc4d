// What every prompt's answer goes through: Ctrl-C (or an aborted run) at a question ends the command as
// an interruption, exit 130 and `Interrupted.`, never as a bug. One place for every prompt.
import { CancelledError } from '../errors.js';

/** The errors @inquirer/prompts rejects with when the user quits a prompt or its signal aborts. */
const QUIT = new Set(['ExitPromptError', 'AbortPromptError', 'CancelPromptError']);

/** The answer of a prompt, or a CancelledError when the user left it with Ctrl-C (other errors pass). */
export async function answer<T>(question: Promise<T>): Promise<T> {
  try {
    return await question;
  } catch (err) {
    if (err instanceof Error && QUIT.has(err.name)) throw new CancelledError('Interrupted.', { cause: err });
    throw err;
  }
}
