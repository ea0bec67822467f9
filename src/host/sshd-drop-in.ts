/**
 * The sshd_config drop-in `dirid join` writes: keyboard-interactive
 * through PAM (where pam_sss shows an IdP user the verification URL and
 * code; Debian's stock sshd_config turns it off), GSSAPI (a Kerberos ticket
 * for the host's host/ principal, from /etc/krb5.keytab) and public keys
 * from the directory through SSSD. Debian's sshd_config includes
 * sshd_config.d/*.conf before its own lines, and sshd takes the first value
 * of each keyword, so these win over the stock file.
 */

export const SSHD_DROP_IN_TEXT = `# Written by dirid join: realm users log in with the device flow
# (keyboard-interactive through PAM), a Kerberos ticket (GSSAPI) or an SSH
# key from the directory (through SSSD). dirid leave removes this file.
KbdInteractiveAuthentication yes
GSSAPIAuthentication yes
GSSAPICleanupCredentials yes
AuthorizedKeysCommand /usr/bin/sss_ssh_authorizedkeys
AuthorizedKeysCommandUser nobody
`;

/**
 * The ssh client drop-in `dirid join` writes (Debian's ssh_config includes
 * ssh_config.d/*.conf): the host keys of the realm's hosts come from the
 * directory through SSSD (sss_ssh_knownhostsproxy fills SSSD's known_hosts
 * for the host being reached), as FreeIPA's client configures ssh, so a
 * user of a joined host reaching another host of the realm checks its key
 * without a first-use prompt.
 */
export const SSH_CLIENT_DROP_IN_TEXT = `# Written by dirid join: the host keys of the realm's hosts from the
# directory, through SSSD. dirid leave removes this file.
Match exec true
	GlobalKnownHostsFile /var/lib/sss/pubconf/known_hosts
	ProxyCommand /usr/bin/sss_ssh_knownhostsproxy -p %p %h
`;
