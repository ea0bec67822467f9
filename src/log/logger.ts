/**
 * The one logger (docs/logging.md): every line the server writes is made
 * here, as `TIME COMPONENT EVENT key=value...` or, when server.conf says
 * `log_format = json`, as one JSON object per line. A component gets a
 * logger for itself, and a connection or a request a child of it carrying
 * its fields (`conn=`), as fastify hands each request a pino child.
 *
 * Values a client chose (a user name, a DN, an error's words) cannot forge
 * a line or a field: a value is written bare only when it is printable
 * ASCII without a space, `"`, `=` or `\`; anything else is a JSON string,
 * whose escapes also cover the characters some viewers break lines at
 * (U+2028, U+2029, C1 controls) and the bidirectional overrides. A field
 * whose name says it holds a secret (password, secret, key, token, cookie,
 * credential, authorization: in any letter case, anywhere in the name) is
 * written as `[redacted]`, whatever the caller passed.
 *
 * The time is made once per millisecond: a busy KDC writes several lines in
 * one. Where the lines go is the caller's `write` (server/start.ts gathers
 * them into one write per turn of the event loop).
 */

export type LogFormat = 'text' | 'json';
export type Level = 'info' | 'warn' | 'error';

/** A field's value: nested objects become dotted names in text (`set.member=`), lists comma-separated values. */
export type FieldValue = string | number | boolean | bigint | null | undefined | readonly FieldValue[] | { readonly [k: string]: FieldValue };
export type Fields = { readonly [k: string]: FieldValue };

export interface Logger {
  /** A logger whose lines carry `fields` too, after the event's name and before its own fields; `component` names another component. */
  child(fields: Fields & { component?: string }): Logger;
  info(event: string, fields?: Fields): void;
  warn(event: string, fields?: Fields): void;
  error(event: string, fields?: Fields): void;
}

export interface LoggerOptions {
  /** where each line goes, without its newline */
  write(line: string): void;
  /** text (default) or json */
  format?: LogFormat;
  /** the component of lines logged without one (default `server`) */
  component?: string;
  /** the clock (ms since the epoch) */
  now?: () => number;
}

/** What a secret field is written as. */
export const REDACTED = '[redacted]';

const SECRET_NAME = /pass(?:word|wd|phrase)?|secret|key|token|cookie|credential|authorization/i;

/** Whether a field of this name holds a secret and is never written (the last part of a dotted name counts alone too). */
export function isSecretField(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Printable ASCII but space, `"`, `=` and `\`: written as it is. */
const BARE = /^[\x21\x23-\x3c\x3e-\x5b\x5d-\x7e]+$/;
/** Printable ASCII but `"` and `\`: quoted as it is, as JSON.stringify would. */
const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** What JSON.stringify leaves raw but a viewer may break a line at, or reorder text by. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A string as JSON, with the escapes of UNSAFE_IN_JSON too. */
function jsonString(s: string): string {
  if (QUOTABLE.test(s)) return `"${s}"`;
  const j = JSON.stringify(s);
  UNSAFE_IN_JSON.lastIndex = 0;
  return UNSAFE_IN_JSON.test(j) ? j.replace(UNSAFE_IN_JSON, unicodeEscape) : j;
}

/** A field name as text may carry it: letters, digits, `_`, `.`, `-`; anything else becomes `_`. */
function safeName(name: string): string {
  return /^[A-Za-z0-9_.-]+$/.test(name) ? name : name.replace(/[^A-Za-z0-9_.-]/g, '_') || '_';
}

/** One value in text: bare, or a JSON string. */
function textScalar(v: string): string {
  return BARE.test(v) ? v : jsonString(v);
}

function textValue(v: Exclude<FieldValue, undefined>): string {
  if (v === null) return '-';
  switch (typeof v) {
    case 'string':
      return textScalar(v);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
  }
  const list = v as readonly FieldValue[];
  if (list.length === 0) return '-';
  return textScalar(list.map((x) => (x === null || x === undefined ? '-' : typeof x === 'object' ? JSON.stringify(x) : String(x))).join(','));
}

/**
 * What a field name is written as: ` name=` (its safe form), or null for a
 * secret's. Decided once per name, since a line's names are few and repeat
 * (a KDC line has ten). Bounded: a name the code did not choose (an
 * attribute's) is decided again once the table is full.
 */
const nameTable = new Map<string, string | null>();
function writtenName(k: string): string | null {
  let n = nameTable.get(k);
  if (n === undefined) {
    n = isSecretField(k) ? null : ` ${safeName(k)}=`;
    if (nameTable.size < 4096) nameTable.set(k, n);
  }
  return n;
}

/** ` name=value` for each field, nested objects as dotted names (`prefix`: the names above); secrets redacted. */
function textFields(fields: Fields, prefix = ''): string {
  let out = '';
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined) continue;
    const n = writtenName(k);
    if (n === null) out += ` ${prefix}${safeName(k)}=${REDACTED}`;
    else if (prefix !== '') {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) out += textFields(v as Fields, `${prefix}${n.slice(1, -1)}.`);
      else out += ` ${prefix}${n.slice(1)}${textValue(v)}`;
    } else if (typeof v === 'string') out += n + (BARE.test(v) ? v : jsonString(v));
    else if (v !== null && typeof v === 'object' && !Array.isArray(v)) out += textFields(v as Fields, `${n.slice(1, -1)}.`);
    else out += n + textValue(v);
  }
  return out;
}

/** A value as JSON, secrets inside it redacted by name. */
function jsonValue(v: FieldValue): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return jsonString(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return String(v);
    case 'bigint':
      return `"${String(v)}"`;
  }
  if (Array.isArray(v)) return `[${(v as readonly FieldValue[]).map(jsonValue).join(',')}]`;
  return `{${jsonMembers(v as Fields).slice(1)}}`;
}

/** `,"name":value` for each field; secrets redacted. */
function jsonMembers(fields: Fields): string {
  let out = '';
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined) continue;
    out += `,${jsonString(k)}:${writtenName(k) === null ? `"${REDACTED}"` : jsonValue(v)}`;
  }
  return out;
}

/** What a logger and its children share: the sink, the format (changed by a reload) and the clock's last reading. */
class Sink {
  private ms = -1;
  private iso = '';
  constructor(
    readonly write: (line: string) => void,
    public json: boolean,
    private readonly now: () => number,
  ) {}

  /** the time as ISO 8601 to the millisecond, made again only when the millisecond changes */
  time(): string {
    const ms = this.now();
    if (ms !== this.ms) {
      this.ms = ms;
      this.iso = new Date(ms).toISOString();
    }
    return this.iso;
  }
}

class LineLogger implements Logger {
  /** the bound fields and the component, rendered once per format (`json`: the format they were rendered for) */
  private bound = '';
  private head = '';
  private json: boolean | undefined;

  constructor(
    private readonly sink: Sink,
    private readonly component: string,
    private readonly fields: Fields,
  ) {
    this.render();
  }

  private render(): void {
    const json = this.sink.json;
    this.json = json;
    this.bound = json ? jsonMembers(this.fields) : textFields(this.fields);
    this.head = json ? `,"component":${jsonString(this.component)}` : ` ${textScalar(this.component)} `;
  }

  child(fields: Fields & { component?: string }): Logger {
    const { component, ...rest } = fields;
    return new LineLogger(this.sink, component ?? this.component, { ...this.fields, ...rest });
  }

  info(event: string, fields?: Fields): void {
    this.line('info', event, fields);
  }

  warn(event: string, fields?: Fields): void {
    this.line('warn', event, fields);
  }

  error(event: string, fields?: Fields): void {
    this.line('error', event, fields);
  }

  private line(level: Level, event: string, fields: Fields | undefined): void {
    const s = this.sink;
    if (s.json !== this.json) this.render();
    if (s.json) {
      s.write(`{"time":"${s.time()}","level":"${level}"${this.head},"event":${jsonString(event)}${this.bound}${fields ? jsonMembers(fields) : ''}}`);
      return;
    }
    s.write(`${s.time()}${this.head}${textScalar(event)}${level === 'info' ? '' : ` level=${level}`}${this.bound}${fields ? textFields(fields) : ''}`);
  }
}

/** The root logger of a process: its format can change while it runs (a reload of server.conf), for it and every child. */
export interface RootLogger extends Logger {
  readonly format: LogFormat;
  setFormat(format: LogFormat): void;
}

class RootLineLogger extends LineLogger implements RootLogger {
  constructor(private readonly shared: Sink, component: string) {
    super(shared, component, {});
  }

  get format(): LogFormat {
    return this.shared.json ? 'json' : 'text';
  }

  setFormat(format: LogFormat): void {
    this.shared.json = format === 'json';
  }
}

/** The root logger of a process (or of a test): lines to `o.write`. */
export function createLogger(o: LoggerOptions): RootLogger {
  return new RootLineLogger(new Sink(o.write, o.format === 'json', o.now ?? Date.now), o.component ?? 'server');
}

/** A logger that writes nothing (a library used without a server). */
export const silentLogger: Logger = createLogger({ write: () => {} });

/** The fields of a thrown value for an `error` line: its message, and its stack when `stack` (internal errors only: a client's malformed input needs none). */
export function errorFields(e: unknown, stack = true): Fields {
  if (!(e instanceof Error)) return { error: String(e) };
  return stack && e.stack ? { error: e.message, stack: e.stack } : { error: e.message };
}

/** Milliseconds since `started` (a performance.now() reading), to `digits` decimals. */
export function elapsedMs(started: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round((performance.now() - started) * f) / f;
}
