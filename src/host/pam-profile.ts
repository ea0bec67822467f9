/**
 * The pam-auth-update profile `dirid join` installs as
 * /usr/share/pam-configs/dirid and enables in place of libpam-sss's `sss`
 * profile. Debian's stock stack asks pam_unix first ("Password:") and gives
 * pam_sss that answer (`use_first_pass`), so a user who logs in at an IdP
 * never sees the verification URL and code, and each answer starts a device
 * authorization nobody sees. With a higher priority than `unix` (256),
 * pam_sss runs first: it prompts by itself (the device-flow text for an
 * IdP user, "Password:" for others) and hands a typed password on to
 * pam_unix (`forward_pass`), so local users still log in with one prompt
 * (pam_sss leaves root alone and says "user unknown" for other local
 * users, and "unavailable" when SSSD does not run: pam_unix decides then).
 * A realm user refused by pam_sss is refused there (`default=die`), not
 * asked again for a "Password:" by pam_unix, which has none for them. The account, session and password lines are the `sss`
 * profile's, which it conflicts with (pam_sss would otherwise run twice,
 * counting a wrong password twice).
 */

export const PAM_PROFILE_NAME = 'dirid';

export const PAM_PROFILE_TEXT = `Name: dirid: realm users through SSSD first (device-flow prompts), then local users
Default: no
Priority: 320
Conflicts: sss
Auth-Type: Primary
Auth:
	[success=end new_authtok_reqd=done user_unknown=ignore authinfo_unavail=ignore default=die]	pam_sss.so forward_pass
Auth-Initial:
	[success=end new_authtok_reqd=done user_unknown=ignore authinfo_unavail=ignore default=die]	pam_sss.so forward_pass
Account-Type: Additional
Account:
	sufficient			pam_localuser.so
	[default=bad success=ok user_unknown=ignore]	pam_sss.so
Session-Type: Additional
Session-Interactive-Only: yes
Session:
	optional			pam_sss.so
Password-Type: Primary
Password:
	sufficient			pam_sss.so use_authtok
Password-Initial:
	sufficient			pam_sss.so
`;

/** The pam-auth-update arguments that switch the stack to it (and home directories on first login, when asked). */
export function pamAuthUpdateArgs(mkhomedir: boolean): string[] {
  return ['--package', '--enable', PAM_PROFILE_NAME, ...(mkhomedir ? ['mkhomedir'] : []), '--disable', 'sss'];
}

/** Whether a common-auth file runs pam_sss before pam_unix, as the profile makes it. */
export function pamSssFirst(commonAuth: string): boolean {
  const modules = commonAuth
    .split('\n')
    .filter((l) => /^\s*auth\s/.test(l))
    .map((l) => /\b(pam_\w+)\.so\b/.exec(l)?.[1]);
  const sss = modules.indexOf('pam_sss');
  const unix = modules.indexOf('pam_unix');
  return sss >= 0 && (unix < 0 || sss < unix) && modules.filter((m) => m === 'pam_sss').length === 1;
}
