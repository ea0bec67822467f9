/**
 * Recent digests in arrival order, with a hash index over them, held in
 * typed arrays only. The KDC's lookaside cache and the replay caches see
 * one new entry per request and keep it for seconds to minutes; as objects
 * in a Map every entry would outlive two young-generation collections and
 * be copied into the old generation, and the garbage collector would spend
 * more per request than the rest of the bookkeeping. Here an entry is a few
 * numbers in preallocated arrays, which the collector never looks into.
 *
 * Keys are the first 8 or 16 bytes of a digest (SHA-256 of a request, the
 * MAC that ends an authenticator): uniformly distributed, so the first word
 * serves as the hash. Entries live in a ring of `capacity` records; only
 * the oldest ever leaves (when it has expired, when the ring is full, or
 * when its owner needs its room), so deletion from the open-addressing
 * table (linear probing, backward-shift deletion) is needed for that one
 * entry only.
 */
const EMPTY = 0;

export class DigestIndex {
  private keys: Int32Array | undefined;
  private expiry: Float64Array | undefined;
  /** record index + 1, or EMPTY */
  private slots: Int32Array | undefined;
  private mask = 0;
  private head = 0;
  private count = 0;

  /** `words`: how many 32-bit words of the digest make the key (2: 64 bits, 4: 128 bits). */
  constructor(
    readonly capacity: number,
    private readonly words: 2 | 4,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > 2 ** 28) throw new RangeError('capacity out of range');
  }

  get size(): number {
    return this.count;
  }

  /** The oldest record's index, or -1 when empty. */
  get oldest(): number {
    return this.count === 0 ? -1 : this.head;
  }

  expiresAt(record: number): number {
    return this.expiry![record]!;
  }

  /** The record holding `digest` (key read at `off`), or -1; a record that has expired by `now` is not found. */
  find(digest: Buffer, off: number, now: number): number {
    if (this.count === 0) return -1;
    const keys = this.keys!;
    const slots = this.slots!;
    const w = this.words;
    const k0 = digest.readInt32LE(off);
    const k1 = digest.readInt32LE(off + 4);
    const k2 = w === 4 ? digest.readInt32LE(off + 8) : 0;
    const k3 = w === 4 ? digest.readInt32LE(off + 12) : 0;
    for (let s = k0 & this.mask; ; s = (s + 1) & this.mask) {
      const r1 = slots[s]!;
      if (r1 === EMPTY) return -1;
      const b = (r1 - 1) * w;
      // an expired record may still sit here (records leave from the oldest end): a newer one with the same key may follow
      if (keys[b] === k0 && keys[b + 1] === k1 && (w === 2 || (keys[b + 2] === k2 && keys[b + 3] === k3)) && this.expiry![r1 - 1]! > now) return r1 - 1;
    }
  }

  /**
   * Appends `digest` as the newest record, making room by dropping the
   * oldest when full; returns the new record's index. The caller has made
   * sure the digest is not present (find() returned -1).
   */
  push(digest: Buffer, off: number, expires: number): number {
    if (!this.keys) this.allocate();
    if (this.count === this.capacity) this.shift();
    const keys = this.keys!;
    const w = this.words;
    let r = this.head + this.count;
    if (r >= this.capacity) r -= this.capacity;
    const b = r * w;
    for (let i = 0; i < w; i++) keys[b + i] = digest.readInt32LE(off + 4 * i);
    this.expiry![r] = expires;
    const slots = this.slots!;
    let s = keys[b]! & this.mask;
    while (slots[s] !== EMPTY) s = (s + 1) & this.mask;
    slots[s] = r + 1;
    this.count++;
    return r;
  }

  /** Drops the oldest record. */
  shift(): void {
    if (this.count === 0) return;
    const r = this.head;
    const slots = this.slots!;
    const mask = this.mask;
    let i = this.keys![r * this.words]! & mask;
    while (slots[i] !== r + 1) i = (i + 1) & mask;
    // backward-shift deletion: pull later members of the probe run into the hole
    for (let j = (i + 1) & mask; slots[j] !== EMPTY; j = (j + 1) & mask) {
      const home = this.keys![(slots[j]! - 1) * this.words]! & mask;
      // the record at j may move to i unless its home lies cyclically within (i, j]
      const stays = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!stays) {
        slots[i] = slots[j]!;
        i = j;
      }
    }
    slots[i] = EMPTY;
    this.head = r + 1 === this.capacity ? 0 : r + 1;
    this.count--;
  }

  /** Drops the records that have expired by `now` (they are the oldest: records are pushed in order of expiry). */
  expire(now: number): void {
    while (this.count > 0 && this.expiry![this.head]! <= now) this.shift();
  }

  clear(): void {
    this.slots?.fill(EMPTY);
    this.head = 0;
    this.count = 0;
  }

  /** Arrays are made on first use: a server that never sees a TGS request never pays for its replay cache. */
  private allocate(): void {
    let tableSize = 1;
    while (tableSize < this.capacity * 2) tableSize *= 2;
    this.keys = new Int32Array(this.capacity * this.words);
    this.expiry = new Float64Array(this.capacity);
    this.slots = new Int32Array(tableSize);
    this.mask = tableSize - 1;
  }
}
