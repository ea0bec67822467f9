/** RFC 4515 §3: escapes a value for use inside a filter assertion. */
export function filterEscape(value: string): string {
  return value.replace(/[\\*()\u0000]/g, (c) => '\\' + c.charCodeAt(0).toString(16).padStart(2, '0'));
}
