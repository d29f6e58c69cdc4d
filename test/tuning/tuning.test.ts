import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { planTuning, type TuningFacts } from '../../src/tuning.js';

const NODE_20 = '11.3.244.8-node.38';
const NODE_22 = '12.4.254.21-node.57';
const NODE_24 = '13.6.233.17-node.53';
const NODE_26 = '14.6.202.34-node.34';

const facts = (over: Partial<TuningFacts> = {}): TuningFacts => ({ v8: NODE_20, execArgv: [], env: {}, command: 'card', ...over });

describe('planTuning', () => {
  it('sets --liftoff-only for every command on Node 20 and 22, and the heap settings only for an import (young generation stopped at 8 MB)', () => {
    for (const v8 of [NODE_20, NODE_22]) {
      expect(planTuning(facts({ v8 }))).toEqual({ flags: ['--liftoff-only'], capYoungGeneration: false });
      expect(planTuning(facts({ v8, command: 'import' }))).toEqual({
        flags: ['--liftoff-only', '--heap-growing-percent=10'],
        capYoungGeneration: 8,
      });
    }
  });

  it('on Node 24 and 26 makes only the import heap settings (--liftoff-only set at run time saves nothing there), the young generation stopped early', () => {
    for (const v8 of [NODE_24, NODE_26]) {
      expect(planTuning(facts({ v8 }))).toEqual({ flags: [], capYoungGeneration: false });
      expect(planTuning(facts({ v8, command: 'import' }))).toEqual({ flags: ['--heap-growing-percent=10'], capYoungGeneration: 3 });
    }
  });

  it('sets nothing on a V8 line it was not measured on, so a flag a later V8 dropped is never set', () => {
    for (const v8 of ['14.7.100.1-node.1', '15.2.44.3-node.7', '11.8.172.17-node.15', '14.1.146.11-node.14']) {
      expect(planTuning(facts({ v8, command: 'import' }))).toEqual({ flags: [], capYoungGeneration: false });
      expect(planTuning(facts({ v8 }))).toEqual({ flags: [], capYoungGeneration: false });
    }
  });

  it('sets nothing with CARDBOARD_NO_TUNING=1', () => {
    expect(planTuning(facts({ env: { CARDBOARD_NO_TUNING: '1' }, command: 'import' }))).toEqual({ flags: [], capYoungGeneration: false });
    expect(planTuning(facts({ env: { CARDBOARD_NO_TUNING: '0' }, command: 'import' })).flags).toContain('--heap-growing-percent=10');
  });

  it('sets nothing when node froze its flags (any call would abort the process): the last of --[no-]freeze-flags-after-init wins', () => {
    const frozen = (execArgv: string[]) => planTuning(facts({ execArgv, command: 'import' })).flags.length === 0;
    expect(frozen([])).toBe(false);
    expect(frozen(['--max-old-space-size=100'])).toBe(false);
    expect(frozen(['--freeze-flags-after-init'])).toBe(true);
    expect(frozen(['--freeze_flags_after_init'])).toBe(true);
    expect(frozen(['--freeze-flags-after-init', '--no-freeze-flags-after-init'])).toBe(false);
    expect(frozen(['--no-freeze-flags-after-init', '--freeze-flags-after-init'])).toBe(true);
    expect(planTuning(facts({ execArgv: ['--freeze-flags-after-init'], command: 'import' }))).toEqual({ flags: [], capYoungGeneration: false });
  });
});

describe('on the Node running this suite (CI runs it on 20, 22, 24 and 26)', () => {
  it('every flag the plan sets is one this V8 knows, so none prints "unrecognized flag"', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    const plan = planTuning({ v8: process.versions.v8, execArgv: [], env: {}, command: 'import' });
    for (const flag of [...plan.flags, ...(plan.capYoungGeneration ? ['--semi-space-growth-factor=1'] : [])]) {
      const name = flag.replace(/=.*/, '');
      expect(known).toMatch(new RegExp(`^\\s+${name}\\s`, 'm'));
    }
  });

  it('sets nothing for a run that sends no request: no command, --help, help, completion', () => {
    for (const over of [{ command: undefined }, { help: true }, { command: 'help' }, { command: 'completion' }]) {
      expect(planTuning(facts({ command: 'import', ...over }))).toEqual({ flags: [], capYoungGeneration: false });
    }
  });

  it('--liftoff-only, where the plan sets it, keeps a hot WebAssembly function out of TurboFan; elsewhere it tiers up', () => {
    // A V8 flag cannot be read back, so this shows its effect: a tiny wasm function called in a loop, then
    // V8's own test intrinsic says which tier runs it. Without the flag it reaches TurboFan within
    // 60k–500k calls on Node 20–26, compiled on a background thread: the probe keeps calling until it is
    // there (up to 60 s: a loaded machine may be slow to schedule that thread). With the flag, 3M calls and
    // a pause show it staying put (a false pass is the worst a loaded machine can cause there).
    const probe = `
      const { planTuning, applyTuning } = await import(${JSON.stringify(new URL('../../dist/tuning.js', import.meta.url).href)});
      const plan = planTuning({ v8: process.versions.v8, execArgv: process.execArgv, env: process.env, command: 'card' });
      await applyTuning(plan);
      // (module (func (export "f") (param i32) (result i32) local.get 0 i32.const 1 i32.add))
      const bytes = new Uint8Array([0,97,115,109,1,0,0,0,1,6,1,96,1,127,1,127,3,2,1,0,7,5,1,1,102,0,0,10,9,1,7,0,32,0,65,1,106,11]);
      const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f;
      let x = 0;
      for (let i = 0; i < 3e6 && !%IsTurboFanFunction(f); i++) x = f(x);
      await new Promise((r) => setTimeout(r, 200));
      const deadline = Date.now() + (plan.flags.includes('--liftoff-only') ? 0 : 60000);
      while (!%IsTurboFanFunction(f) && Date.now() < deadline) {
        for (let i = 0; i < 1e5; i++) x = f(x);
        await new Promise((r) => setTimeout(r, 20));
      }
      console.log(JSON.stringify({ liftoffOnly: plan.flags.includes('--liftoff-only'), turbofan: %IsTurboFanFunction(f) }));
    `;
    const run = (env: NodeJS.ProcessEnv) =>
      JSON.parse(
        execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', probe], { encoding: 'utf8', env }),
      ) as { liftoffOnly: boolean; turbofan: boolean };
    const tuned = run({ ...process.env, CARDBOARD_NO_TUNING: '' });
    expect(tuned.turbofan).toBe(!tuned.liftoffOnly);
    expect(run({ ...process.env, CARDBOARD_NO_TUNING: '1' })).toEqual({ liftoffOnly: false, turbofan: true });
  });
});
