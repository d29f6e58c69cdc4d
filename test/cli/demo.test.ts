import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../helpers/cli.js';

const DEMO = fileURLToPath(new URL('../../bin/demo.js', import.meta.url));

describe('npm run demo', () => {
  it('imports the demo CSV into the bundled emulator and lists every card as CSV', async () => {
    const child = spawn(process.execPath, [DEMO], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    const [code] = await once(child, 'exit');
    expect(stderr).toContain('$ cardboard import');
    expect(code).toBe(0);
    const header = stdout.split(/\r?\n/).find((l) => l.startsWith('_id,'));
    expect(header).toBe('_id,Name,Status,Owner,Priority');
    // 25 demo rows, each listed once with the Assignee column landed in Owner.
    // Service-shaped ids (17 letters and digits), as the emulator makes them.
    expect(stdout.match(/^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17},/gm)).toHaveLength(25);
    expect(stdout).toContain('Fix login redirect loop,Open,Alice Martin,High');
  });
});
