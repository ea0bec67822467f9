/**
 * The simple paged results control's server state (RFC 2696, docs/ldap.md):
 * per connection, the searches a client is paging through, each under a
 * cookie we made. A state holds the DNs of the entries not yet returned (the
 * whole result was found on the first page, within the search's size and
 * time limits) and what the search was, so a cookie continues only the
 * search that produced it. Each page gets a new cookie, so an old one cannot
 * be replayed. Memory is bounded: a connection keeps at most MAX_PAGED
 * searches (the oldest is dropped for a new one), each at most the size
 * limit's DNs, and the states go with the connection.
 */
import { randomBytes } from 'node:crypto';

/** Paged searches kept per connection. */
export const MAX_PAGED = 8;

export interface PagedState {
  /** the search this continues (base, scope, filter, attributes, typesOnly, who asked) */
  readonly key: string;
  /** DNs of the entries still to return, in order */
  readonly dns: string[];
  /** the limit that cut the whole result short, told with the last page */
  readonly limit?: 'size' | 'time';
  /** how many entries the whole result has (the estimate each page reports) */
  readonly total: number;
}

export class PagedSearches {
  private readonly states = new Map<string, PagedState>();

  /** Keeps `state` and returns the cookie that continues it. */
  keep(state: PagedState): Buffer {
    if (this.states.size >= MAX_PAGED) this.states.delete(this.states.keys().next().value!);
    const cookie = randomBytes(12);
    this.states.set(cookie.toString('hex'), state);
    return cookie;
  }

  /** Removes and returns the state a cookie names, if any. */
  take(cookie: Buffer): PagedState | undefined {
    const k = cookie.toString('hex');
    const s = this.states.get(k);
    this.states.delete(k);
    return s;
  }

  clear(): void {
    this.states.clear();
  }
}
