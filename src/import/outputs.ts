// --results and --rejects: CSV files written as rows finish.
import { closeSync, writeSync } from 'node:fs';
import { fileError } from '../fs-errors.js';
import { csvRow } from '../io/csv.js';
import { emptyRecord } from '../own-keys.js';
import { openPrivate } from '../private-file.js';
import { redactValue } from '../redact.js';
import { REASON_COLUMN, type RowOutcome } from './types.js';

/**
 * A CSV file written in batches with writeSync: bounded memory, and what is written survives a crash.
 * Created 0600 (it holds the board's data); a path that exists is written with the mode it has (openPrivate:
 * the user's file, /dev/stdout, a FIFO, which must have its reader already). Every secret of the run (token,
 * signing key) is redacted: a server may echo them in its messages.
 */
class CsvFile {
  private buffer = '';
  private fd: number;

  constructor(
    readonly path: string,
    flag: string,
    private readonly secrets: Iterable<string>,
  ) {
    try {
      this.fd = openPrivate(path, 'w', { flag });
    } catch (err) {
      throw fileError(err, { action: `write the ${flag} file`, path, hint: `Pass ${flag} with a path in a writable directory.` });
    }
  }

  /** Append one CSV row; secrets are redacted in each value, before CSV doubles a quote in one. */
  row(values: readonly unknown[]): void {
    this.write(csvRow(values.map((v) => redactValue(this.secrets, v))));
  }

  /** Append one NDJSON record, redacted the same way. */
  record(value: unknown): void {
    this.write(`${JSON.stringify(redactValue(this.secrets, value))}\n`);
  }

  private write(text: string): void {
    this.buffer += text;
    if (this.buffer.length >= 65_536) this.flush();
  }

  flush(): void {
    if (this.buffer === '') return;
    writeSync(this.fd, this.buffer);
    this.buffer = '';
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** The two report files of a run; either may be absent. */
export class ImportOutputs {
  private readonly results?: CsvFile;
  private readonly rejects?: CsvFile;
  private reasonAt = -1;

  /** Open the files now (before anything is sent), so a bad path fails with exit 2. */
  /** `json`: the input was JSON, and the rejects file is NDJSON records (the next input as it is). */
  /** `secrets`: redacted from both files (ctx.secrets: read as rows are written). */
  constructor(
    paths: { results?: string; rejects?: string },
    private readonly headers: string[],
    private readonly json = false,
    secrets: Iterable<string> = [],
  ) {
    if (paths.results) {
      this.results = new CsvFile(paths.results, '--results', secrets);
      this.results.row(['line', 'state', '_id', 'message', 'settled']);
    }
    if (paths.rejects) {
      this.rejects = new CsvFile(paths.rejects, '--rejects', secrets);
      // An input that is itself a rejects file keeps one reason column: the new one replaces the old.
      this.reasonAt = headers.indexOf(REASON_COLUMN);
      if (!json) this.rejects.row(this.reasonAt === -1 ? [...headers, REASON_COLUMN] : headers);
    }
  }

  /** Record a finished row: every row in results; rejected and uncertain rows in rejects, in the input's own columns. */
  add(outcome: RowOutcome): void {
    this.results?.row([outcome.line, outcome.state, outcome.id ?? '', outcome.message ?? '', outcome.settled ? 'board' : '']);
    if (this.rejects && (outcome.state === 'rejected' || outcome.state === 'uncertain') && this.json) {
      // The record as read (absent keys stay absent), with the reason replacing any earlier one.
      const record = emptyRecord();
      this.headers.forEach((h, i) => {
        if (outcome.values[i] !== undefined && h !== REASON_COLUMN) record[h] = outcome.values[i];
      });
      record[REASON_COLUMN] = `${outcome.state}: line ${outcome.line}: ${outcome.message ?? ''}`;
      this.rejects.record(record);
    } else if (this.rejects && (outcome.state === 'rejected' || outcome.state === 'uncertain')) {
      const count = this.headers.length;
      const values = outcome.values.slice(0, count);
      while (values.length < count) values.push('');
      // A row with extra fields keeps them in the reason, so nothing of the input is lost.
      const extra = outcome.values.length > count ? ` [extra fields: ${outcome.values.slice(count).join(' | ')}]` : '';
      const reason = `${outcome.state}: line ${outcome.line}: ${outcome.message ?? ''}${extra}`;
      if (this.reasonAt === -1) values.push(reason);
      else values[this.reasonAt] = reason;
      this.rejects.row(values);
    }
  }

  /** Flush both files (the command calls this on a timer and at the end). */
  flush(): void {
    this.results?.flush();
    this.rejects?.flush();
  }

  close(): void {
    this.results?.close();
    this.rejects?.close();
  }
}
