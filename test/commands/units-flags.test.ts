// Every duration and rate flag reads the one grammar of src/units.ts. Parse-level twins
// of test/cli/timeout.e2e.test.ts: a spy run function receives the options, nothing is sent.
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { toOptions as emulatorOptions } from '../../src/commands/emulator/emulator.js';
import { importCommand } from '../../src/commands/import/import.js';
import type { ImportPlan } from '../../src/import/plan.js';
import { webhookListenCommand, type WebhookListenOptions } from '../../src/commands/webhook/listen.js';
import { webhookReplayCommand, type WebhookReplayOptions } from '../../src/commands/webhook/replay.js';
import { webhookSendCommand, type WebhookSendOptions } from '../../src/commands/webhook/send.js';
import { type Context, type ContextParts, type ContextRef, createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';
import { UsageError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { testContext } from '../io/buffers.js';

type Builder<O> = (parent: Command, ctx: ContextRef, run: (ctx: Context, opts: O) => Promise<void>) => Command;

/** Parse argv through a builder whose run function only records the options. */
async function parseWith<O>(build: Builder<O>, argv: string[], ctx = testContext().ctx): Promise<O> {
  const program = new Command('cardboard').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  const run = vi.fn(async (_ctx: Context, _opts: O) => {});
  build(program, () => ctx, run);
  await program.parseAsync(argv, { from: 'user' });
  expect(run).toHaveBeenCalledTimes(1);
  return run.mock.calls[0]![1];
}

describe('import --give-up-after', () => {
  it.each([
    ['1h', 3_600_000],
    ['2min', 120_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
  ])('%s → %d ms', async (text, ms) => {
    const plan = await parseWith<ImportPlan>(importCommand, ['import', 'cards.csv', '--give-up-after', text]);
    expect(plan.policy.giveUpAfterMs).toBe(ms);
  });

  it('defaults to 15 minutes and refuses a bare number', async () => {
    expect((await parseWith<ImportPlan>(importCommand, ['import', 'cards.csv'])).policy.giveUpAfterMs).toBe(900_000);
    await expect(parseWith<ImportPlan>(importCommand, ['import', 'cards.csv', '--give-up-after', '15'])).rejects.toThrow(
      /^--give-up-after 15 has no unit$/,
    );
  });
});

describe('webhook listen --forward-timeout', () => {
  it.each([
    ['1h', 3_600_000],
    ['2min', 120_000],
    ['500ms', 500],
  ])('%s → %d ms', async (text, ms) => {
    const opts = await parseWith<WebhookListenOptions>(webhookListenCommand, ['listen', '--forward-timeout', text]);
    expect(opts.forwardTimeout.ms).toBe(ms);
  });

  it('refuses 0s naming the flag', async () => {
    await expect(parseWith<WebhookListenOptions>(webhookListenCommand, ['listen', '--forward-timeout', '0s'])).rejects.toThrow(
      /^--forward-timeout 0s must be at least 1ms$/,
    );
  });
});

describe('webhook send and replay take the global --timeout as parsed', () => {
  it('use it when given, else 60 s', async () => {
    const { ctx } = testContext({ globals: { timeout: { ms: 5_400_000, text: '90m' } } });
    const send = await parseWith<WebhookSendOptions>(webhookSendCommand, ['send', '--to', 'http://localhost:3000/h'], ctx);
    expect(send.timeout).toEqual({ ms: 5_400_000, text: '90m' });
    const replay = await parseWith<WebhookReplayOptions>(webhookReplayCommand, ['replay', 'h.jsonl', '--to', 'http://localhost:3000/h']);
    expect(replay.timeout.ms).toBe(60_000);
  });
});

describe('emulator --rate-limit and --port', () => {
  it.each([
    ['120/min', 120],
    ['2/s', 120],
    ['7200/h', 120],
    ['1/s', 60],
  ])('%s → %d per minute', (text, perMinute) => {
    expect(emulatorOptions({ rateLimit: text }).rateLimit).toEqual({ perMinute, burst: 20 }); // the service bursts to 20 a second
  });

  it('refuses a bare rate (it used to mean per minute here, per second elsewhere)', () => {
    expect(() => emulatorOptions({ rateLimit: '120' })).toThrow(new UsageError('--rate-limit 120 is ambiguous: write 120/s or 120/min'));
  });

  it('reads --port with the shared port grammar', () => {
    expect(emulatorOptions({ port: '0' }).port).toBe(0);
    expect(() => emulatorOptions({ port: '70000' })).toThrow(/^--port: "70000" is not a port number/);
  });
});

describe('global --timeout and --rate, parsed once for every command', () => {
  it.each([
    [['--timeout', '1h', 'completion', 'bash'], { timeout: { ms: 3_600_000, text: '1h' } }],
    [['--timeout', '90s', 'completion', 'bash'], { timeout: { ms: 90_000, text: '90s' } }],
    [['completion', 'bash', '--timeout', '2min'], { timeout: { ms: 120_000, text: '2min' } }],
    [['--rate', '120/min', 'completion', 'bash'], { rate: 2 }],
  ])('%j reaches the run context as its globals', async (argv, globals) => {
    const { parts, stdout } = testContext();
    // The context main builds once parsed: seen through the one part a command asks it for (the API client).
    let seen: Context | undefined;
    const program = await buildProgram(parts as Required<Pick<ContextParts, 'stdout' | 'stderr'>>, argv, () => seen!);
    program.hook('preAction', (_root, action) => {
      seen = createContext({ ...parts, globals: action.optsWithGlobals() });
    });
    await program.parseAsync(argv, { from: 'user' });
    expect(seen!.globals).toMatchObject(globals);
    expect(Object.isFrozen(seen) && Object.isFrozen(seen!.globals)).toBe(true);
    expect(stdout.text).toContain('complete');
    expect(await main(argv, testContext().parts)).toBe(0);
  });

  it.each([
    // A global option is read by the root, before the verb; the usage lines are still the typed command's.
    [['--timeout', '30', 'completion', 'bash'], "error: --timeout 30 has no unit\nhint: Write 30s for seconds, 30m for minutes or 30ms.\nUsage: cardboard completion [options] [shell]\nSee 'cardboard completion --help'.\n"],
    [['completion', 'bash', '--rate', '2'], "error: --rate 2 is ambiguous: write 2/s or 2/min\nUsage: cardboard completion [options] [shell]\nSee 'cardboard completion --help'.\n"],
    [['--rate', '2'], "error: --rate 2 is ambiguous: write 2/s or 2/min\nUsage: cardboard [options] [command]\nSee 'cardboard --help'.\n"],
  ])('%j exits 2 before the command runs, even one that sends nothing', async (argv, stderrText) => {
    const { parts, stdout, stderr } = testContext();
    expect(await main(argv, parts)).toBe(2);
    expect(stderr.text).toBe(stderrText);
    expect(stdout.text).toBe('');
  });
});
