/**
 * The configuration file format shared by default.conf (client) and
 * server.conf (server): `[section]` headers and `key = value` lines, `#` or
 * `;` comments. Strict: anything else is an error naming the line.
 */
export type IniData = Record<string, Record<string, string>>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const MAX_BYTES = 64 * 1024;

export function parseIni(text: string, source = 'configuration'): IniData {
  if (text.length > MAX_BYTES) throw new ConfigError(`${source}: file too large`);
  const out: IniData = Object.create(null) as IniData;
  let section: string | null = null;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const sec = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line);
    if (sec) {
      section = sec[1]!.toLowerCase();
      out[section] ??= Object.create(null) as Record<string, string>;
      return;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) throw new ConfigError(`${source}, line ${i + 1}: expected "key = value" or "[section]"`);
    if (section === null) throw new ConfigError(`${source}, line ${i + 1}: "${kv[1]}" is outside any [section]`);
    out[section]![kv[1]!.toLowerCase()] = kv[2]!;
  });
  return out;
}

export function formatIni(data: IniData): string {
  const parts: string[] = [];
  for (const [section, values] of Object.entries(data)) {
    parts.push(`[${section}]`);
    for (const [k, v] of Object.entries(values)) {
      if (/[\r\n]/.test(v)) throw new ConfigError(`value of ${k} contains a line break`);
      parts.push(`${k} = ${v}`);
    }
    parts.push('');
  }
  return parts.join('\n');
}
