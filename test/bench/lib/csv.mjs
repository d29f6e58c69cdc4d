// Generated inputs: a CSV of N rows whose headers are exactly the bench board's fields.
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { OUT } from './proc.mjs';

const STATUS = ['To do', 'Doing', 'Done'];
const OWNER = ['Ada Lovelace', 'Grace Hopper', 'Linus Torvalds', 'Margaret Hamilton'];
const PRIORITY = ['High', 'Medium', 'Low'];

/** Field values of row i (1-based), as the CSV holds them and as they are posted. */
export function rowValues(i) {
  return { Name: `Card ${i}: migrate the billing export`, Status: STATUS[i % 3], Owner: OWNER[i % 4], Priority: PRIORITY[i % 3] };
}

/** The JSON body a client posts for row i (what cardboard sends: every column, values as strings). */
export function rowBody(i) {
  return JSON.stringify(rowValues(i));
}

/** Write test/bench/out/rows-N.csv once (written aside, then renamed, so a stopped run leaves no half file). */
export function csvFile(rows) {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `rows-${rows}.csv`);
  if (existsSync(path)) return path;
  const part = `${path}.part`;
  const fd = openSync(part, 'w');
  writeSync(fd, 'Name,Status,Owner,Priority\n');
  let chunk = '';
  for (let i = 1; i <= rows; i++) {
    const v = rowValues(i);
    // The Name holds a colon and spaces but no comma or quote: no CSV quoting needed.
    chunk += `${v.Name},${v.Status},${v.Owner},${v.Priority}\n`;
    if (i % 10_000 === 0 || i === rows) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  closeSync(fd);
  renameSync(part, path);
  return path;
}
