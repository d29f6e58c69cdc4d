// The words completion offers follow the one control-character policy, terminalText's (src/io/text.ts):
// a name it would escape is not offered, since a shell lists the candidates raw on the terminal.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCompletionList } from '../../src/commands/completion/completion.js';
import { tempDir } from '../helpers/cli.js';
import { testContext } from '../io/buffers.js';

describe('completion --list', () => {
  it('leaves out every alias terminalText would escape, and offers the rest as they are', async () => {
    const configDir = tempDir();
    const hostile = ['line\nbreak', 'bell\u0007', 'c1\u009b', 'rtl\u202eoverride', 'zero\u200bwidth', 'sep\u2028line', 'bom\ufeff'];
    const fine = ['work', 'café', 'emoji🧑‍💻', 'back\\slash'];
    const boards = Object.fromEntries([...hostile, ...fine].map((alias, i) => [alias, { id: `b${i}`, baseUrl: 'http://127.0.0.1:9', token: 't' }]));
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ boards }), { mode: 0o600 });
    const { ctx, stdout } = testContext({ env: { CARDBOARD_CONFIG_DIR: configDir } });
    await runCompletionList(ctx, 'aliases');
    expect(stdout.text.split('\n').filter(Boolean)).toEqual(fine);
  });
});
