// The Node binaries a run measures on: the bench's own, then each `--node` (a line such as 22, resolved and
// fetched the way the CI does it, or the path of a node binary).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { nodeForLine } from '../../../.ci/node-lines.mjs';
import { log } from './proc.mjs';
import { isNodeLine, UsageError } from './stats.mjs';

/** [{ path, version }]: the bench's own Node first, then each spec once (a repeat, or the own Node again, is dropped). */
export function resolveNodes(specs) {
  const paths = [process.execPath];
  for (const spec of specs) {
    let path = spec;
    if (isNodeLine(spec)) path = nodeForLine(spec, (line) => log(`node ${spec}: ${line}`));
    else if (!existsSync(spec)) throw new UsageError(`--node ${spec}: neither a Node line (22) nor an existing file`);
    if (!paths.includes(path)) paths.push(path);
  }
  return paths.map((path) => ({ path, version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim() }));
}
