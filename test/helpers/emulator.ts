import { startEmulator } from '../../src/emulator/server.js';
import type { BoardsFile, EmulatorOptions, RunningEmulator } from '../../src/emulator/types.js';

export type { BoardsFile, EmulatorOptions, RunningEmulator } from '../../src/emulator/types.js';

/** The default test board: `Update if exists`, Create Fields off. */
export const BOARD_ID = 'b-test';
export const TOKEN = 'tok-test-123';
export const SIGNING_KEY = 'sk-test-123';
export const FIELDS = ['Name', 'Status', 'Owner', 'Priority'];

/** A second board with its own token, in `Always Create New` mode. */
export const CREATE_NEW_BOARD_ID = 'b-create-new';
export const CREATE_NEW_TOKEN = 'tok-create-new-456';
export const CREATE_NEW_SIGNING_KEY = 'sk-create-new-456';

/** A board with Create Fields on (fields Name, Status to start with). */
export const CREATE_FIELDS_BOARD_ID = 'b-create-fields';
export const CREATE_FIELDS_TOKEN = 'tok-create-fields-789';
export const CREATE_FIELDS_SIGNING_KEY = 'sk-create-fields-789';

/** The three test boards; fixtures/boards.json holds the same (a test checks they agree). */
export const TEST_BOARDS: BoardsFile = {
  [BOARD_ID]: {
    token: TOKEN,
    fields: [...FIELDS],
    updateMode: 'Update if exists',
    createFields: false,
    webhookUrl: null,
    signingKey: SIGNING_KEY,
  },
  [CREATE_NEW_BOARD_ID]: {
    token: CREATE_NEW_TOKEN,
    fields: [...FIELDS],
    updateMode: 'Always Create New',
    createFields: false,
    webhookUrl: null,
    signingKey: CREATE_NEW_SIGNING_KEY,
  },
  [CREATE_FIELDS_BOARD_ID]: {
    token: CREATE_FIELDS_TOKEN,
    fields: ['Name', 'Status'],
    updateMode: 'Update if exists',
    createFields: true,
    webhookUrl: null,
    signingKey: CREATE_FIELDS_SIGNING_KEY,
  },
};

/**
 * Start the emulator in-process on a free port with TEST_BOARDS (unless `boards` is given), a fixed
 * fault seed and a 50 ms webhook retry cap. Close it in afterAll/afterEach.
 */
export function startTestEmulator(opts: Partial<EmulatorOptions> = {}): Promise<RunningEmulator> {
  return startEmulator({
    boards: structuredClone(TEST_BOARDS),
    faultSeed: 1,
    webhookRetryCapMs: 50,
    ...opts,
    port: opts.port ?? 0,
  });
}

/**
 * Each read of the board's cards (GET /api/aptlet/<id>, spec 4.5) the emulator received, in order, as the
 * page it asked for: its query string after `page=` ('' for none; a query string that does not start with
 * `page=` is kept whole, so that a test comparing pages sees it).
 */
export function pageRequests(emu: RunningEmulator, id = BOARD_ID): string[] {
  const list = new RegExp(`^/api/aptlet/${id}(\\?|$)`);
  return emu
    .requests()
    .filter((r) => r.method === 'GET' && list.test(r.path))
    .map((r) => (r.path.split('?')[1] ?? '').replace(/^page=/, ''));
}
