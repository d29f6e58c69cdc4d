// The words a failed request adds beyond its answer: the size of a body a server refused, named only where
// a size limit is a plausible cause, and the --timeout help that says what it bounds.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/program.js';
import { ApiError } from '../../src/errors.js';
import { DEFAULT_RETRY } from '../../src/http/command-policy.js';
import { bodySizeNote, LARGE_BODY_BYTES, namingBodySize } from '../../src/http/error-words.js';
import { testContext } from '../io/buffers.js';

const refused = (status: number, sentBytes: number) =>
  new ApiError(`${status} Bad Request from POST http://h/api/aptlet/b: Bad request`, { method: 'POST', url: 'http://h/api/aptlet/b', status, serverMessage: 'Bad request', sentBytes });

describe('the size of a refused body', () => {
  it('a 400 names it from LARGE_BODY_BYTES on; a 413 whatever it is', () => {
    expect(bodySizeNote(refused(400, LARGE_BODY_BYTES - 1), 'card')).toBeUndefined();
    expect(bodySizeNote(refused(400, LARGE_BODY_BYTES), 'card')).toBe('the card sent was 1.0 MB');
    expect(bodySizeNote(refused(413, 2048), 'comment')).toBe('the comment sent was 2.0 kB');
  });

  it('the error says what was sent and that the server may limit it, keeping status and message', () => {
    const err = namingBodySize(refused(400, 5_452_595), 'card') as ApiError;
    expect(err.message).toBe('400 Bad Request from POST http://h/api/aptlet/b: Bad request (the card sent was 5.2 MB)');
    expect(err.hint).toBe('The server refused a 5.2 MB card; it may limit the size of a card: try a smaller one.');
    expect([err.status, err.serverMessage, err.exitCode]).toEqual([400, 'Bad request', 1]);
    const small = refused(400, 300);
    expect(namingBodySize(small, 'card')).toBe(small);
  });
});

describe('--timeout help', () => {
  it('says it bounds each try, with the tries of the default retry policy', async () => {
    const { ctx } = testContext();
    const program = await buildProgram(ctx, [], () => ctx, true);
    const help = program.options.find((o) => o.long === '--timeout')!.description;
    expect(help).toContain('each try of a request, not the whole command');
    expect(help).toContain(`tried up to ${DEFAULT_RETRY.maxTries} times`);
  });
});
