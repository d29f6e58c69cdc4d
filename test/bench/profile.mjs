// Summarise a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by package or file, so a
// missed goal can be traced to its cause. Usage: node test/bench/profile.mjs file.cpuprofile [top=25]
import { readFileSync } from 'node:fs';

const [file, top = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
// timeDeltas[i] is the time before samples[i]: charge it to the node sampled.
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(url) {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) return url.slice(nm + 13).split('/').slice(0, url.slice(nm + 13).startsWith('@') ? 2 : 1).join('/');
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  return dist !== -1 ? `dist/${url.slice(dist + 6)}` : url.replace(/^file:\/\//, '');
}

const fns = new Map();
const places = new Map();
for (const [id, us] of self) {
  const { callFrame: f } = byId.get(id);
  const place = where(f.url);
  const name = `${f.functionName || '(anonymous)'}  ${place}:${f.lineNumber + 1}`;
  fns.set(name, (fns.get(name) ?? 0) + us);
  places.set(place, (places.get(place) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
show('self time by package / file', places);
show('self time by function', fns);
