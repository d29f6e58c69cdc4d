// A mirror on a PostgreSQL server: CARDBOARD_MIRROR=postgres://… (or postgresql://), read as libpq reads a
// connection URI, with libpq's environment (PGPASSWORD, PGHOST, PGSSLMODE…) taken from the run's environment.
// The URL may hold a password: it is kept in the target and given to the client only; what is shown, and every
// error, names the location (the URL without its password), and a server's message is scrubbed of it too.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { CardboardError, UsageError } from '../../errors.js';
import { scrubSecret } from '../../redact.js';
import type { PgTarget } from './protocol.js';

type Env = Record<string, string | undefined>;

/** Whether CARDBOARD_MIRROR names a PostgreSQL server rather than a file. */
export function isPgUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

/** Query parameters that hold a secret: dropped from the location. */
const SECRET_PARAMS = new Set(['password', 'sslpassword']);

/**
 * `url` as it may be shown: without the password of its user part, nor the parameters that hold one. The user
 * part ends at the last `@` before the query (a password may hold an `@` that was not escaped).
 */
export function pgLocation(url: string): string {
  const [, scheme = '', rest = ''] = /^([a-z]+:\/\/)(.*)$/is.exec(url) ?? [];
  const q = rest.indexOf('?');
  let head = q < 0 ? rest : rest.slice(0, q);
  const at = head.lastIndexOf('@');
  if (at >= 0) {
    const user = head.slice(0, at).split(':')[0]!;
    head = `${user === '' ? '' : `${user}@`}${head.slice(at + 1)}`;
  }
  if (q < 0) return scheme + head;
  const params = rest
    .slice(q + 1)
    .split('&')
    .filter((p) => p !== '' && !SECRET_PARAMS.has(safeDecode(p.split('=')[0]!).toLowerCase()));
  return scheme + head + (params.length === 0 ? '' : `?${params.join('&')}`);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The target of a mirror at `url`, reached with the environment `env`. */
export function pgTarget(url: string, env: Env): PgTarget {
  return { url, location: pgLocation(url), env };
}

/** Where libpq looks for a server when neither the URL nor PGHOST names one: the socket directory of Debian's build, else PostgreSQL's own. */
function defaultHost(): string {
  return existsSync('/var/run/postgresql') ? '/var/run/postgresql' : '/tmp';
}

/** The secrets of `target`: the URL's password and PGPASSWORD, scrubbed from any text shown. */
function secretsOf(target: PgTarget): string[] {
  const fromUrl = /^[a-z]+:\/\/([^?]*)@/is.exec(target.url)?.[1]?.split(':').slice(1).join(':');
  const params = new URLSearchParams(target.url.split('?').slice(1).join('?'));
  return [fromUrl, fromUrl === undefined ? undefined : safeDecode(fromUrl), params.get('password') ?? undefined, params.get('sslpassword') ?? undefined, target.env.PGPASSWORD].filter(
    (s): s is string => s !== undefined && s !== '',
  );
}

/** `text` with every secret of `target` replaced. */
function scrubbed(text: string, secrets: readonly string[]): string {
  return secrets.reduce((t, s) => scrubSecret(t, s), text);
}

/** The SSL modes libpq knows, and what each asks of the connection. */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

/** A connection's settings: the client's configuration, the SSL mode, and the TLS settings to try when it asks for them. */
interface Plan {
  config: pg.ClientConfig;
  mode: SslMode;
  tls: TlsOptions;
}

/**
 * Read the URL as libpq does: its parts, then the environment for what it leaves out, then libpq's defaults.
 * pg-connection-string parses it (libpq's spellings: `host=/socket/dir`, `options`, `sslrootcert`…); the SSL mode
 * is applied here with libpq's meaning (require: encrypt, verify nothing unless a root certificate is given).
 */
function planOf(target: PgTarget): Plan {
  const env = target.env;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(target.url, { useLibpqCompat: true });
  } catch (err) {
    const reason = err instanceof Error && /sslmode=verify-ca requires/.test(err.message) ? 'sslmode=verify-ca needs sslrootcert=<file of the certificate authority>' : firstLine(err, secretsOf(target));
    throw new UsageError(`CARDBOARD_MIRROR ${target.location} cannot be read: ${reason}.`, { hint: 'Write it as postgres://user@host:port/database?sslmode=…, as libpq reads it.' });
  }
  const mode = (String(parsed.sslmode ?? env.PGSSLMODE ?? 'prefer').toLowerCase() || 'prefer') as SslMode;
  if (!SSL_MODES.includes(mode)) throw new UsageError(`CARDBOARD_MIRROR ${target.location}: sslmode=${mode} is not one of ${SSL_MODES.join(', ')}.`);
  const files = typeof parsed.ssl === 'object' && parsed.ssl !== null ? parsed.ssl : {};
  const tls: TlsOptions = { ...(files.ca === undefined ? {} : { ca: files.ca }), ...(typeof files.cert === 'string' ? { cert: files.cert } : {}), ...(files.key === undefined ? {} : { key: files.key }) };
  if (mode === 'verify-ca' && tls.ca === undefined) throw new UsageError(`CARDBOARD_MIRROR ${target.location}: sslmode=verify-ca needs sslrootcert=<file of the certificate authority>.`);
  // require with a root certificate verifies the chain, as verify-ca; without one, nothing (encryption only).
  if (mode === 'verify-ca' || (mode === 'require' && tls.ca !== undefined)) tls.checkServerIdentity = () => undefined;
  else if (mode !== 'verify-full') tls.rejectUnauthorized = false;
  const user = parsed.user || env.PGUSER || userInfo().username;
  const timeout = Number(parsed.connect_timeout ?? env.PGCONNECT_TIMEOUT ?? 30);
  const config: pg.ClientConfig = {
    host: parsed.host || env.PGHOST || defaultHost(),
    port: Number(parsed.port || env.PGPORT || 5432),
    user,
    database: parsed.database || env.PGDATABASE || user,
    application_name: typeof parsed.application_name === 'string' ? parsed.application_name : (env.PGAPPNAME ?? 'cardboard'),
    connectionTimeoutMillis: (Number.isFinite(timeout) && timeout > 0 ? timeout : 30) * 1000,
    keepAlive: true,
  };
  const password = parsed.password || env.PGPASSWORD;
  if (password) config.password = password;
  const options = parsed.options ?? env.PGOPTIONS;
  if (typeof options === 'string' && options !== '') config.options = options;
  return { config, mode, tls };
}

/** What pg says when the server answers an SSL request with no. */
const NO_SSL = 'The server does not support SSL connections';

/**
 * A client connected to the server of `target`. The SSL mode is libpq's: disable and allow begin without SSL
 * (allow tries SSL when the server refuses that), prefer and the others with it (prefer goes on without it
 * when the server has none); a Unix socket never uses SSL. A failure is one CardboardError naming the location.
 */
export async function connectTo(target: PgTarget): Promise<pg.Client> {
  const plan = planOf(target);
  const socket = String(plan.config.host).startsWith('/');
  const first = socket || plan.mode === 'disable' || plan.mode === 'allow' ? false : plan.tls;
  try {
    return await connectWith(plan.config, first);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (!socket && plan.mode === 'prefer' && err instanceof Error && err.message === NO_SSL) return connectWith(plan.config, false).catch((e: unknown) => Promise.reject(connectError(e, target, plan)));
    if (!socket && plan.mode === 'allow' && code === '28000') return connectWith(plan.config, plan.tls).catch((e: unknown) => Promise.reject(connectError(e, target, plan)));
    throw connectError(err, target, plan);
  }
}

async function connectWith(config: pg.ClientConfig, ssl: TlsOptions | false): Promise<pg.Client> {
  const client = new pg.Client({ ...config, ssl });
  // An error after the connection is made (the server going away) must not be an uncaught exception of the
  // thread: the next query fails with it.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  await checkClient(client);
  return client;
}

/**
 * How often the server looks, while it runs a statement of a session, whether the session's client is still
 * there: it ends the statement when it is not. Without it, a statement the server computes long after its
 * client has gone runs on to its end (it learns of the end only when it sends a row): a `cardboard query`
 * stopped by Ctrl-C, SIGTERM or kill -9 would leave its statement computing on the server, for ever for one
 * that never ends. A cancel request (a new connection with the session's key, sent as the run stops) would
 * cover Ctrl-C and SIGTERM only, and hold up the stop while it connects: the check covers every way a process
 * ends, kill -9 too, since the system closes its sockets and the server sees that within the interval.
 */
const CLIENT_CHECK = '1s';

/**
 * Set CLIENT_CHECK on a new session. The setting came with PostgreSQL 14: on an older server it is not in
 * pg_settings and nothing is set; a server whose system cannot check (not Linux) refuses the value, and the
 * session goes on without it, as before 14.
 */
async function checkClient(client: pg.Client): Promise<void> {
  try {
    await client.query(`SELECT set_config(name, '${CLIENT_CHECK}', false) FROM pg_settings WHERE name = 'client_connection_check_interval'`);
  } catch (err) {
    const refused = typeof (err as { code?: unknown } | null)?.code === 'string' && !String((err as { code: string }).code).startsWith('08');
    if (!refused) {
      await client.end().catch(() => {});
      throw err;
    }
  }
}

/** The first line of an error's message, scrubbed. */
function firstLine(err: unknown, secrets: readonly string[]): string {
  return scrubbed((err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/\.$/, ''), secrets);
}

/** A copy of `err` for --verbose: its name, code and message, with every secret of the target replaced. */
function safeCause(err: unknown, secrets: readonly string[]): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  const copy = new Error(scrubbed(e.message, secrets));
  copy.name = e.name;
  copy.stack = scrubbed(e.stack ?? e.message, secrets);
  if (typeof code === 'string') Object.assign(copy, { code });
  return copy;
}

/** A failure to connect as one line and a hint, naming the location and never a password (exit 1). */
export function connectError(err: unknown, target: PgTarget, plan?: Plan): CardboardError {
  const secrets = secretsOf(target);
  const code = (err as { code?: unknown } | null)?.code;
  const message = firstLine(err, secrets);
  const where = `the mirror's database at ${target.location}`;
  const host = plan === undefined ? undefined : String(plan.config.host);
  const said = (line: string, hint: string) => new CardboardError(line, { hint, cause: safeCause(err, secrets) });
  const check = 'Check that PostgreSQL runs there and that CARDBOARD_MIRROR names its host and port (or its socket directory, host=/dir).';
  switch (code) {
    case 'ECONNREFUSED':
      return said(`Cannot reach ${where}: the server refused the connection.`, check);
    case 'ENOENT':
      return said(`Cannot reach ${where}: no server listens on the socket in ${host ?? 'its directory'}.`, check);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return said(`Cannot reach ${where}: its host is not known.`, check);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return said(`Cannot reach ${where}: ${message}.`, check);
    case '28P01':
    case '28000':
      return said(`${capital(where)} refused the login: ${message}.`, 'Check the user and its password (in the URL, PGPASSWORD or ~/.pgpass) and what the server allows (pg_hba.conf).');
    case '3D000':
      return said(`${capital(where)} is not there: ${message}.`, 'Create the database (createdb), or name another one in CARDBOARD_MIRROR.');
    case '42501':
      return said(`${capital(where)} refused the connection: ${message}.`, 'Grant the role CONNECT on the database, or use another role.');
  }
  if (/password must be a string|no password/i.test(message)) {
    return said(`${capital(where)} asks for a password and none was given.`, 'Set PGPASSWORD, add it to ~/.pgpass, or put it in the URL.');
  }
  if (message === NO_SSL) return said(`${capital(where)} does not accept SSL, which sslmode=${plan?.mode ?? 'require'} asks for.`, 'Use sslmode=prefer or disable, or enable SSL on the server.');
  if (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO|ALTNAME/i.test(code)) {
    return said(`${capital(where)} sent a certificate that was not verified (${code}).`, 'Give its authority with sslrootcert=<file>, or use sslmode=require to encrypt without verifying.');
  }
  if (/timeout/i.test(message)) return said(`Cannot reach ${where}: no answer within ${Math.round(Number(plan?.config.connectionTimeoutMillis ?? 30_000) / 1000)}s.`, check);
  return said(`Cannot connect to ${where}: ${message}.`, check);
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Codes of a connection that ended under a statement: the server's shutdowns (57P01-57P03) and the socket's. */
const LOST_CODES = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * `err` as the user's error when it says the connection to the server is gone (the server stopped or ended the
 * session, the network dropped it): one line naming the location (exit 1). Anything else is returned as it is.
 */
export function lostConnection(err: unknown, target: PgTarget): unknown {
  if (err instanceof CardboardError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  const lost = (typeof code === 'string' && (LOST_CODES.has(code) || code.startsWith('08'))) || /Connection terminated|not queryable|connection error/i.test(err.message);
  if (!lost) return err;
  const secrets = secretsOf(target);
  return new CardboardError(`The connection to the mirror's database at ${target.location} was lost: ${firstLine(err, secrets)}.`, {
    hint: 'Check that the server is running, then run the command again (what was written before stays).',
    cause: safeCause(err, secrets),
  });
}


/** What a call of the mirror's thread does: reads the tables, writes them, or may make them (an open that creates). */
export type MirrorAccess = 'read' | 'write' | 'create';

/** Where the grants a mirror's roles need are listed. */
const GRANTS_DOC = 'docs/mirror.md, "The database and its roles"';

/**
 * The right a role was refused (SQLSTATE 42501), from the server's message and what the call does: what the
 * role lacks, and who has it.
 */
function missingRight(message: string, access: MirrorAccess): { right: string; hint: string } {
  const schema = /permission denied for schema (\S+)/.exec(message)?.[1];
  if (schema !== undefined && access === 'create') {
    return { right: `CREATE on the schema ${schema} (to make the mirror's tables)`, hint: `Run the first \`mirror pull\` or \`webhook listen --mirror\` as a role that owns the schema (the listener's), or grant CREATE on it (${GRANTS_DOC}).` };
  }
  if (schema !== undefined) return { right: `USAGE on the schema ${schema}`, hint: `Grant USAGE on the schema to the role (${GRANTS_DOC}).` };
  if (/must be owner of/.test(message)) {
    return { right: "ownership of the board's view of its fields (remade when the fields change)", hint: `Run \`mirror pull\` and \`webhook listen --mirror\` as the role that made the mirror (the listener's, ${GRANTS_DOC}).` };
  }
  if (access === 'read') return { right: "SELECT on the mirror's tables", hint: `Grant USAGE on the schema and SELECT on its tables to the role (${GRANTS_DOC}).` };
  return {
    right: "SELECT, INSERT, UPDATE and DELETE on the mirror's tables",
    hint: `\`mirror pull\`, \`webhook listen --mirror\` and \`import --mirror\` write to the mirror: run them as the listener's role, or grant it those (${GRANTS_DOC}).`,
  };
}

/**
 * `err` as the user's error when the server refused the role a right on the mirror (42501), or found its
 * tables gone (42P01, 3F000: dropped while this run used them): one line naming the location and the role, and
 * a hint (exit 1: the command is right, the database is not ready for this role). Anything else as it is.
 */
export function refusedBy(err: unknown, target: PgTarget, access: MirrorAccess): unknown {
  if (err instanceof CardboardError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  const secrets = secretsOf(target);
  const message = firstLine(err, secrets);
  if (code === '42501') {
    const role = planOf(target).config.user;
    const { right, hint } = missingRight(message, access);
    return new CardboardError(`The mirror at ${target.location} refused the role ${JSON.stringify(role)} (${message}): it needs ${right}.`, { hint, cause: safeCause(err, secrets) });
  }
  if (code === '42P01' || code === '3F000') {
    return new CardboardError(`The mirror's tables at ${target.location} are gone (${message}): they were dropped while this run used them.`, {
      hint: '`cardboard mirror pull` makes the mirror again (as a role with CREATE on the schema).',
      cause: safeCause(err, secrets),
    });
  }
  return err;
}
