/**
 * Reading the parts of an MIT krb5.conf (profile format) a client needs:
 * libdefaults.default_realm and the KDCs of each realm. KRB5_CONFIG (a
 * colon-separated list) or /etc/krb5.conf.
 */
import { readFileSync } from 'node:fs';
import type { KdcAddress } from './transport.js';

export interface Krb5Conf {
  defaultRealm?: string;
  realms: Record<string, { kdc: string[] }>;
}

export function parseKrb5Conf(text: string): Krb5Conf {
  const out: Krb5Conf = { realms: {} };
  let section = '';
  const stack: string[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/\s+[#;].*$/, '').trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[([^\]]+)\]$/.exec(line);
    if (sec) {
      section = sec[1]!.trim();
      stack.length = 0;
      continue;
    }
    if (line === '}') {
      stack.pop();
      continue;
    }
    const open = /^([^=]+?)\s*=\s*\{$/.exec(line);
    if (open) {
      stack.push(open[1]!.trim());
      continue;
    }
    const kv = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const [key, value] = [kv[1]!.trim(), kv[2]!.trim()];
    if (section === 'libdefaults' && stack.length === 0 && key === 'default_realm') out.defaultRealm = value;
    if (section === 'realms' && stack.length === 1 && key === 'kdc') (out.realms[stack[0]!] ??= { kdc: [] }).kdc.push(value);
  }
  return out;
}

export function loadKrb5Conf(env: NodeJS.ProcessEnv = process.env): Krb5Conf {
  const files = (env.KRB5_CONFIG ?? '/etc/krb5.conf').split(':').filter(Boolean);
  const merged: Krb5Conf = { realms: {} };
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const c = parseKrb5Conf(text);
    merged.defaultRealm ??= c.defaultRealm;
    for (const [r, v] of Object.entries(c.realms)) (merged.realms[r] ??= { kdc: [] }).kdc.push(...v.kdc);
  }
  return merged;
}

export function kdcAddresses(conf: Krb5Conf, realm: string): KdcAddress[] {
  return (conf.realms[realm]?.kdc ?? []).map((k) => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(k);
    if (v6) return { host: v6[1]!, port: Number(v6[2] ?? 88) };
    const [host, port] = k.split(':');
    return { host: host!, port: Number(port ?? 88) };
  });
}
