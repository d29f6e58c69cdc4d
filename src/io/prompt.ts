// What every prompt's answer goes through: Ctrl-C (or an aborted run) at a question ends the command as
// an interruption, `Interrupted.` and death by SIGINT (130), never as a bug. One place for every prompt.
import { CancelledError } from '../errors.js';

/** The errors @inquirer/prompts rejects with when the user quits a prompt or its signal aborts. */
const QUIT = new Set(['ExitPromptError', 'AbortPromptError', 'CancelPromptError']);

/** The answer of a prompt, or a CancelledError when the user left it with Ctrl-C (other errors pass). */
export async function answer<T>(question: Promise<T>): Promise<T> {
  try {
    return await question;
  } catch (err) {
    if (!(err instanceof Error) || !QUIT.has(err.name)) throw err;
    // A prompt reads a raw terminal, where Ctrl-C is a key, not a signal: the run ends by SIGINT all the
    // same (main.ts), as it would at any other moment. An aborted prompt was stopped by the run's own signal.
    throw new CancelledError('Interrupted.', { cause: err, signal: err.name === 'ExitPromptError' ? 'SIGINT' : undefined });
  }
}
