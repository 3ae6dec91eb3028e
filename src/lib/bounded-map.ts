/**
 * A Map with a size cap that evicts its oldest entry first. Caches on the hot path use it so
 * memory stays bounded however many distinct credentials arrive. `onEvict` hears of each entry
 * the cap pushes out (not of deletes), so an index kept beside the map can follow it.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(
    private readonly maxSize: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.maxSize) {
      const oldest = this.entries().next();
      if (!oldest.done) {
        const [oldKey, oldValue] = oldest.value;
        this.delete(oldKey);
        this.onEvict?.(oldKey, oldValue);
      }
    }
    return super.set(key, value);
  }
}
