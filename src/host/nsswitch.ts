/**
 * /etc/nsswitch.conf as a joined host needs it: `sss` as a source of
 * passwd, group and sudoers (users, groups and sudo rules from the
 * directory through SSSD). Debian's libnss-sss and libsss-sudo add these
 * when installed; the edit adds what is missing and leaves every other line,
 * comment and source as it was.
 */

export const NSS_DATABASES = ['passwd', 'group', 'sudoers'] as const;

/** The file with `sss` on each database's line (a missing line is added as `files sss`). */
export function withSss(text: string): string {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const db of NSS_DATABASES) {
    const i = lines.findIndex((l) => new RegExp(`^\\s*${db}\\s*:`).test(l));
    if (i < 0) {
      lines.push(`${`${db}:`.padEnd(16)}files sss`);
      continue;
    }
    const line = lines[i]!;
    const [head, ...comment] = line.split('#');
    const sources = head!.slice(head!.indexOf(':') + 1).trim().split(/\s+/).filter((s) => s !== '');
    if (sources.includes('sss')) continue;
    lines[i] = `${head!.replace(/\s*$/, '')} sss${comment.length ? ` #${comment.join('#')}` : ''}`;
  }
  return lines.join('\n') + '\n';
}
