/**
 * A cache of entries that share one lifetime, bounded by a count (the
 * derived-key cache keeps entries without expiry; the opened-TGT cache keeps
 * them for minutes; the KDC's lookaside and replay caches, which take an
 * entry per request, use the allocation-free DigestIndex instead).
 * Entries sit in a Map for look-up and in an arrival-order queue for
 * eviction: expired entries, and the oldest while full, leave from the
 * front of the queue. (Iterating the Map itself from its start is not
 * O(1): V8 leaves deleted slots in place until the table is rebuilt, and
 * the iterator walks over them.)
 */
interface Slot<V> {
  readonly key: string;
  readonly value: V;
  readonly expires: number;
  live: boolean;
}

/** Queue slots consumed before the queue array is compacted. */
const COMPACT_AFTER = 4096;

export class ExpiringCache<V> {
  private readonly map = new Map<string, Slot<V>>();
  private queue: Slot<V>[] = [];
  private head = 0;

  constructor(private readonly maxEntries: number) {}

  /** The value under `key` unless it has expired. */
  get(key: string, now: number): V | undefined {
    const s = this.map.get(key);
    return s && s.expires > now ? s.value : undefined;
  }

  /** Evicts what must go, then adds (or replaces) an entry. Entries must be added in order of expiry. */
  set(key: string, value: V, expires: number, now: number): void {
    const old = this.map.get(key);
    if (old) this.drop(old);
    this.evict(now);
    const s: Slot<V> = { key, value, expires, live: true };
    this.map.set(key, s);
    this.queue.push(s);
  }

  get size(): number {
    return this.map.size;
  }

  clear(): void {
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.live = false;
    this.map.clear();
    this.queue = [];
    this.head = 0;
  }

  private drop(s: Slot<V>): void {
    if (!s.live) return;
    s.live = false;
    this.map.delete(s.key);
  }

  /** Expired entries go, and the oldest while one more would exceed the bound. */
  private evict(now: number): void {
    while (this.head < this.queue.length) {
      const s = this.queue[this.head]!;
      if (s.live && s.expires > now && this.map.size < this.maxEntries) break;
      this.drop(s);
      this.head++;
    }
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
