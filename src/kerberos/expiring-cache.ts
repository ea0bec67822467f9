/**
 * A cache of entries that share one lifetime, bounded by a total cost (the
 * derived-key cache keeps entries without expiry, bounded by count; the
 * KDC's lookaside and replay caches, which take an entry per request, use
 * the allocation-free DigestIndex instead).
 * Entries sit in a Map for look-up and in an arrival-order queue for
 * eviction: expired entries, and the oldest while over the bound, leave from
 * the front of the queue. (Iterating the Map itself from its start is not
 * O(1): V8 leaves deleted slots in place until the table is rebuilt, and
 * the iterator walks over them.)
 */
interface Slot<V> {
  readonly key: string;
  readonly value: V;
  readonly expires: number;
  cost: number;
  live: boolean;
}

/** Queue slots consumed before the queue array is compacted. */
const COMPACT_AFTER = 4096;

export class ExpiringCache<V> {
  private readonly map = new Map<string, Slot<V>>();
  private queue: Slot<V>[] = [];
  private head = 0;
  private total = 0;

  constructor(private readonly maxCost: number) {}

  /** The value under `key` unless it has expired. */
  get(key: string, now: number): V | undefined {
    const s = this.map.get(key);
    return s && s.expires > now ? s.value : undefined;
  }

  /** Evicts what must go, then adds (or replaces) an entry. Entries must be added in order of expiry. */
  set(key: string, value: V, expires: number, cost: number, now: number): Slot<V> {
    const old = this.map.get(key);
    if (old) this.drop(old);
    this.evict(now, cost);
    const s: Slot<V> = { key, value, expires, cost, live: true };
    this.map.set(key, s);
    this.queue.push(s);
    this.total += cost;
    return s;
  }

  /** Adds to the cost of an entry still held (a reply that arrived later). */
  addCost(s: Slot<V>, cost: number): void {
    if (!s.live) return;
    s.cost += cost;
    this.total += cost;
  }

  get size(): number {
    return this.map.size;
  }

  clear(): void {
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.live = false;
    this.map.clear();
    this.queue = [];
    this.head = 0;
    this.total = 0;
  }

  get cost(): number {
    return this.total;
  }

  private drop(s: Slot<V>): void {
    if (!s.live) return;
    s.live = false;
    this.total -= s.cost;
    this.map.delete(s.key);
  }

  /** Expired entries go, and the oldest while `incoming` more would exceed the bound. */
  private evict(now: number, incoming: number): void {
    while (this.head < this.queue.length) {
      const s = this.queue[this.head]!;
      if (s.live && s.expires > now && this.total + incoming <= this.maxCost) break;
      this.drop(s);
      this.head++;
    }
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
